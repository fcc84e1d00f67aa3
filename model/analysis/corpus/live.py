"""The per-sentence parts of the corpus views, run on the user's translation (model-runner jobs:
each is a module-level function of (checkpoint, **kwargs) returning plain data, see serving/jobs.py).

- `attribution_job`: input x gradient and integrated gradients for every output token (attribution.py).
- `sentence_vectors_job`: one head's queries and keys on the user's sentence, to place it on the
  corpus query-key map (qk_map.py, with the projection stored in the corpus file).
Re-decoding with the k least important heads off needs no new job: it is the Ablation of
`importance.ablation_of(order[:k])` through the existing translate job.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from model.checkpoints.checkpoint import Checkpoint
from .attribution import Attribution, attribute
from .vectors import attention_inputs, queries_and_keys


def attribution_job(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int],
                    steps: int = 32) -> Attribution:
    """Attributions of every output token's log-probability to the source tokens (T, S)."""
    return attribute(checkpoint.model, [int(i) for i in source_ids], [int(i) for i in output_ids], steps)


def sentence_vectors(model, source_ids: Sequence[int], output_ids: Sequence[int], kind: str, layer: int,
                     head: int) -> tuple[np.ndarray, np.ndarray]:
    """(queries (Tq, d_k), keys (Tk, d_k)) of one head on one teacher-forced sentence."""
    device = model.embedding.weight.device
    src = torch.tensor([[int(i) for i in source_ids]], dtype=torch.long, device=device)  # (1, S)
    tgt_in = torch.tensor([[model.config.bos_id, *[int(i) for i in output_ids[:-1]]]], dtype=torch.long,
                          device=device)  # (1, T)
    model.eval()
    inputs = attention_inputs(model, src, tgt_in)[kind][layer]
    query, key = queries_and_keys(model, kind, layer, inputs)  # (1, h, Tq, d_k), (1, h, Tk, d_k)
    return query[0, head].float().cpu().numpy(), key[0, head].float().cpu().numpy()


def sentence_vectors_job(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int], kind: str,
                         layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """`sentence_vectors` on the checkpoint's model."""
    return sentence_vectors(checkpoint.model, source_ids, output_ids, kind, int(layer), int(head))
