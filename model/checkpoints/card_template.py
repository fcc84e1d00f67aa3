"""The model card's Markdown template (Jinja, as huggingface_hub's `ModelCard.from_template` reads it): the
fixed prose of the card, with a `{{ slot }}` for each part model/checkpoints/model_card.py fills in from the
checkpoint's metrics.json and config.json.
"""

TEMPLATE = """---
{{ card_data }}
---

# {{ title }}

A small German ↔ English translation model: the original Transformer of "Attention Is All You Need"
(Vaswani et al., 2017, [arXiv:1706.03762](https://arxiv.org/abs/1706.03762)), encoder-decoder and
post-LN exactly as in the paper, written from scratch in PyTorch and trained from random weights by
{{ project }}, an app that shows every attention head while it translates. One model translates both
ways: the first source token is a target-language tag (`<2en>` or `<2de>`).

{{ architecture }}

## Training

{{ provenance }}

{{ training_data }}

Training follows section 5 of the paper: Adam (β = 0.9, 0.98, ε = 1e-9), warm-up then inverse-square-root
learning rate, label smoothing 0.1, dropout, batches by token count.

## Results

{{ results }}

## Licence

{{ licences }}

## How to use

The weights load with {{ project }}'s code (they are not a `transformers` model): its `PretrainedTransformer`
is a `torch.nn.Module` with huggingface_hub's `PyTorchModelHubMixin`, so `from_pretrained`,
`save_pretrained` and `push_to_hub` work as for any Hub model. In a copy of the project, after
`python3 -m pip install -r requirements.txt`:

```python
{{ usage_python }}
```

```bash
{{ usage }}
```

The checkpoint is data only: `config.json` (the `TransformerConfig`), safetensors weights (shards
under 10 MB), `tokenizer.json` (BPE with byte fallback), `metrics.json`, `training_log.json`, and the
app's `film.npz` (the training film) and `corpus_heads.npz` (per-head corpus statistics). Nothing is
unpickled when it is loaded.

## Limitations

Trained on short sentences (image captions and everyday phrases): long, technical or unusual input
translates poorly, and input in neither German nor English comes back as fluent nonsense.

## Citation

Vaswani et al. (2017), "Attention Is All You Need", arXiv:1706.03762.
"""
