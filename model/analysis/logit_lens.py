"""The logit lens of a translation (sections 3.1 and 3.4): each decoder layer's output at every step read through
the final projection, a readout computed when its view is opened, not with every translation.

The trace's own distributions come from the last layer; the lens reads the layers before it through the same
shared embedding matrix. `logit_lens` replays the trace's teacher-forced pass (model/decoding/teacher_forced.py)
under the trace's own ablation, so the hidden states are the ones the trace's weights were read from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.core.transformer import Transformer
from model.decoding.ablation import Ablation
from model.decoding.teacher_forced import encode_source, teacher_force
from model.decoding.trace import TranslationTrace
from model.text.tokenizer import SubwordTokenizer

LOGIT_LENS_K = 5  # tokens kept per decoder layer and step


@dataclass
class LogitLens:
    """The top LOGIT_LENS_K tokens each decoder layer predicts at each step of one trace."""

    tokens: list[list[list[str]]]  # T x L_dec x k: top tokens read from each decoder layer, most probable first
    probs: np.ndarray  # (T, L_dec, k) their probabilities (layer output -> projection -> softmax)
    output_ids: list[int]  # the trace's output these were read for (T ids)


def top_tokens_per_layer(model: Transformer, layer_hiddens: list[torch.Tensor], k: int = LOGIT_LENS_K):
    """Top-k of each layer's output through the final projection: L x (1, T, d_model) -> probs, ids (T, L, k).

    Post-LN layers end in a LayerNorm, so each layer output is already normalised like the last one: no extra
    norm is applied. Top-k is taken on the logits and normalised with logsumexp, without a softmax over (T, L, V).
    """
    k = min(k, model.config.vocab_size)
    logits = model.project(torch.stack([hidden[0] for hidden in layer_hiddens], dim=1)).float()  # (T, L, V)
    top_logits, top_ids = logits.topk(k, dim=-1)  # (T, L, k)
    return (top_logits - logits.logsumexp(dim=-1, keepdim=True)).exp(), top_ids


@torch.inference_mode()
def logit_lens(model: Transformer, tokenizer: SubwordTokenizer, trace: TranslationTrace) -> LogitLens:
    """The logit lens of every step of `trace`: its teacher-forced pass replayed, each layer read out."""
    model.eval()
    ablation = Ablation.from_description(trace.ablation).tensors(model.config, model.embedding.weight.device)
    output_ids = [int(i) for i in trace.output_ids]
    forced = teacher_force(
        model, encode_source(model, [int(i) for i in trace.source_ids], ablation), output_ids, ablation
    )
    probs, ids = top_tokens_per_layer(model, forced.decoded.layer_hiddens)  # (T, L, k)
    tokens = [[tokenizer.tokens(row) for row in layer] for layer in ids.tolist()]
    return LogitLens(tokens, probs.cpu().numpy(), output_ids)
