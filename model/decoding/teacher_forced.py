"""Trace assembly: one teacher-forced pass (3.1, the decoder reads the output shifted right) over a
translation, written-out attention (3.2.1) so every layer's weights and scores come back, turned
into a TranslationTrace (model/decoding/trace.py).

`teacher_force` is the one teacher-forced scoring pass: `model.decoding.greedy.translate` builds the
trace from it and `model.analysis.readouts.token_probabilities` reads its probabilities. Its
distributions equal the cached greedy steps' (a test checks this).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from model.decoding.ablation import Ablation
from model.core.masks import causal_mask, decoder_mask, padding_mask
from model.text.tokenizer import SubwordTokenizer
from model.decoding.trace import TranslationTrace
from model.core.transformer import DecoderOutput, EncoderOutput, Interventions, Transformer


class EncodedSource(NamedTuple):
    src: torch.Tensor  # (1, S) ids
    src_mask: torch.Tensor  # (1, 1, 1, S)
    encoded: EncoderOutput  # memory (1, S, d_model) and every encoder layer's attention


class TeacherForced(NamedTuple):
    source: EncodedSource
    tgt_mask: torch.Tensor  # (1, 1, T, T) causal AND padding
    decoded: DecoderOutput  # every decoder layer's hidden states and attentions
    log_probs: torch.Tensor  # (T, V) float32 next-token log-probabilities


def encode_source(model: Transformer, source_ids: list[int], ablation: Interventions) -> EncodedSource:
    """Encode one sentence's ids with the written-out attention (weights kept)."""
    src = torch.tensor([list(source_ids)], dtype=torch.long, device=model.embedding.weight.device)  # (1, S)
    src_mask = padding_mask(src, model.config.pad_id)  # (1, 1, 1, S)
    return EncodedSource(src, src_mask, model.encode(src, src_mask, ablation, output_attentions=True))


def teacher_force(
    model: Transformer, source: EncodedSource, output_ids: list[int], ablation: Interventions
) -> TeacherForced:
    """Decode [BOS] + output_ids[:-1] in one pass; row t scores output_ids[t]."""
    tgt = torch.tensor([[model.config.bos_id, *output_ids[:-1]]], dtype=torch.long, device=source.src.device)  # (1, T)
    tgt_mask = decoder_mask(tgt, model.config.pad_id)  # (1, 1, T, T)
    decoded = model.decode(
        tgt, source.encoded.memory, source.src_mask, tgt_mask, None, ablation, output_attentions=True
    )
    log_probs = torch.log_softmax(model.project(decoded.hidden)[0].float(), dim=-1)  # (T, V)
    return TeacherForced(source, tgt_mask, decoded, log_probs)


def _numpy(attentions: list, part: str) -> np.ndarray:
    """Stack one part ('weights' or 'scores') of per-layer AttentionOutputs of a single sentence.

    list of L x (1, h, Tq, Tk) -> (L, h, Tq, Tk) float32.
    """
    return torch.stack([getattr(a, part)[0] for a in attentions]).float().cpu().numpy()


def build_trace(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    text: str,
    direction: str,
    was_cut: bool,
    forced: TeacherForced,
    output_ids: list[int],
    top_k: int,
    forced_steps: int,
    ablation: Ablation | None,
    stopped_by: str,
) -> TranslationTrace:
    """The TranslationTrace of a decoded sentence from its teacher-forced pass (`stopped_by`: how decoding ended,
    TranslationTrace.stopped_by)."""
    config = model.config
    source_ids = forced.source.src[0].tolist()
    target_ids = [config.bos_id, *output_ids[:-1]]
    encoded, decoded, src_mask = forced.source.encoded, forced.decoded, forced.source.src_mask
    probs = forced.log_probs.exp()  # (T, V)
    top_probs, top_ids = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (T, k)
    entropy = -(probs * forced.log_probs).sum(-1) / math.log(2)  # (T,) bits
    chosen = torch.tensor(output_ids, device=probs.device)
    n_source, n_target = len(source_ids), len(target_ids)

    return TranslationTrace(
        direction=direction,
        source_text=tokenizer.decode(source_ids) if was_cut else text,
        translation=tokenizer.decode(output_ids),
        source_tokens=tokenizer.tokens(source_ids),
        source_ids=source_ids,
        target_tokens=tokenizer.tokens(target_ids),
        output_tokens=tokenizer.tokens(output_ids),
        output_ids=output_ids,
        candidate_tokens=[tokenizer.tokens(row) for row in top_ids.tolist()],
        candidate_ids=top_ids.cpu().numpy(),
        candidate_probs=top_probs.cpu().numpy(),
        chosen_probs=probs.gather(1, chosen[:, None])[:, 0].cpu().numpy(),
        entropy=entropy.cpu().numpy(),
        encoder_attention=_numpy(encoded.self_attentions, "weights"),
        decoder_self_attention=_numpy(decoded.self_attentions, "weights"),
        cross_attention=_numpy(decoded.cross_attentions, "weights"),
        encoder_scores=_numpy(encoded.self_attentions, "scores"),
        decoder_self_scores=_numpy(decoded.self_attentions, "scores"),
        cross_scores=_numpy(decoded.cross_attentions, "scores"),
        source_mask=src_mask[0, 0, 0].cpu().numpy(),
        causal_mask=causal_mask(n_target)[0, 0].numpy(),
        decoder_mask=forced.tgt_mask[0, 0].cpu().numpy(),
        cross_mask=src_mask[0, 0].expand(n_target, n_source).cpu().numpy(),
        source_truncated=was_cut,
        forced_steps=forced_steps,
        ablation=(ablation or Ablation()).describe(),
        stopped_by=stopped_by,
    )
