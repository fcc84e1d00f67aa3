"""What every head does across a corpus, beside the one-sentence views.

One module per job, each naming its paper:
- `batches`: the corpus (Multi30k val, both directions) as teacher-forced batches (section 5.1).
- `vectors`: every layer's attention inputs and each head's queries and keys (3.2.1, 3.2.2).
- `roles`: head roles and confidence over a corpus (Voita et al. 2019).
- `importance`: head importance from the gradient of the loss w.r.t. a head mask, and pruning
  curves (Michel et al. 2019).
- `qk_map`: a joint 2-D projection of one head's queries and keys (AttentionViz, Yeh et al. 2023).
- `attribution`: input x gradient and integrated gradients (Sundararajan et al. 2017) of a chosen
  token's log-probability beside cross-attention (Jain & Wallace 2019, "Attention is not Explanation").
- `store`: the corpus file beside a checkpoint, stamped with a hash of the weights.
- `collect`: everything above over a corpus, once per checkpoint (scripts/corpus_heads.py).
- `live`: the per-sentence parts the app runs on the user's trace (model-runner jobs).

Pure PyTorch and numpy, like the rest of model/: results are numpy arrays and dataclasses.
"""
