"""The per-sentence part of the corpus views that is not in the corpus file: one head's queries and keys on the
user's sentence, to place it on the corpus query-key map (qk_map.py, with the projection stored in the corpus file).
The attribution of the user's sentence is attribution.py's `attribute`. The app runs both as model jobs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .vectors import attention_inputs, queries_and_keys


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
