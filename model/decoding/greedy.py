"""Greedy decoding with a KV cache, and `translate`, which returns a full TranslationTrace.

Greedy decoding picks the most probable next token at every step. With the cache, each step
feeds only the newest token to the decoder: self-attention keys/values of earlier positions are
reused (they never change, thanks to the causal mask, 3.2.3) and cross-attention keys/values are
computed once from the encoder memory. The steps use the fused attention kernel: they need no
weights.

`translate` runs the model once per sentence: encode, greedy steps with the cache, then one
teacher-forced pass over the chosen tokens (model/decoding/teacher_forced.py) that returns every attention matrix
of every layer and the next-token distributions (identical to the cached steps' logits; a test
checks this).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import torch

from model.text import limits
from model.decoding.ablation import Ablation
from model.decoding.greedy_choice import full_choice, greedy_choice
from model.text.inputs import pad_batch, prepare_source  # noqa: F401  (re-exported: callers import them from here)
from model.core.layers import DecoderCache
from model.core.masks import decoder_mask, padding_mask
from model.text.tokenizer import SubwordTokenizer
from model.decoding.trace import TranslationTrace
from model.decoding.teacher_forced import build_trace, encode_source, teacher_force
from model.core.transformer import NO_INTERVENTIONS, Interventions, Transformer


def never_generated(config, device=None) -> torch.Tensor:
    """Ids that decoding never chooses: the pad token when it is also the start token (Marian's models,
    whose generation config bans it); a chosen pad would read as padding. (0,) or (1,) ids."""
    return torch.tensor([config.pad_id] if config.bos_id == config.pad_id else [], dtype=torch.long, device=device)


class GreedyStep(NamedTuple):
    logits: torch.Tensor | None  # (B, V) next-token logits at this step; None unless greedy_steps(full_logits=True)
    tokens: torch.Tensor  # (B,) chosen ids ([PAD] for sequences that already ended)
    finished: torch.Tensor  # (B,) True once a sequence has produced [EOS]
    imposed: torch.Tensor  # (B,) True where the length limit wrote [EOS] (force_eos_at_limit) the model did not choose


def greedy_steps(
    model: Transformer,
    memory: torch.Tensor,
    src_mask: torch.Tensor,
    max_new_tokens: int,
    use_cache: bool = True,
    prefix: torch.Tensor | None = None,
    ablation: Interventions = NO_INTERVENTIONS,
    full_logits: bool = True,
) -> Iterator[GreedyStep]:
    """Yield one GreedyStep per decoding step until every sequence ends or max_new_tokens.

    memory (B, S, d_model) and src_mask (B, 1, 1, S) come from `model.encode`.
    prefix (B, P): tokens forced after [BOS] before greedy choice begins (branching); not yielded.
    use_cache=False recomputes the whole prefix at every step (the reference the cache must match).
    ablation: decoder head masks and positions flag (`Ablation.tensors`); the default is the intact model.
    full_logits=False: each step yields only its choice, made through the int8 screen where it is used
    (model/decoding/greedy_choice.py: the same argmax without reading the whole float32 projection).
    """
    config = model.config
    batch = memory.size(0)
    bos = torch.full((batch, 1), config.bos_id, dtype=torch.long, device=memory.device)
    tokens_so_far = bos if prefix is None else torch.cat([bos, prefix.to(memory.device)], dim=1)  # (B, 1 + P)
    finished = torch.zeros(batch, dtype=torch.bool, device=memory.device)
    cache = DecoderCache.empty(len(model.decoder_layers)) if use_cache else None
    max_new_tokens = min(max_new_tokens, config.max_positions - tokens_so_far.size(1))
    banned = never_generated(config, memory.device)
    for step in range(max_new_tokens):
        # with the cache, feed only positions not cached yet: the whole forced prefix at first, then one token
        new = tokens_so_far[:, cache.length :] if cache is not None else tokens_so_far  # (B, T_new)
        mask = decoder_mask(new, config.pad_id) if cache is None or cache.length == 0 else None
        hidden = model.decode(new, memory, src_mask, mask, cache, ablation).hidden  # (B, T_new, d_model)
        if full_logits:
            logits = model.project(hidden[:, -1])  # (B, V)
            choice = full_choice(logits, banned)  # (B,)
        else:
            logits, choice = None, greedy_choice(model, hidden[:, -1], banned)  # (B,)
        if config.force_eos_at_limit and step == max_new_tokens - 1:
            tokens = torch.full_like(choice, config.eos_id)  # the limit ends the sentence
        else:
            tokens = choice
        imposed = (tokens != choice) & ~finished  # (B,)
        tokens = tokens.masked_fill(finished, config.pad_id)  # (B,)
        finished = finished | (tokens == config.eos_id)
        yield GreedyStep(logits, tokens, finished, imposed)
        if bool(finished.all()):
            return
        tokens_so_far = torch.cat([tokens_so_far, tokens[:, None]], dim=1)  # (B, t + 1)


@torch.inference_mode()  # no autograd bookkeeping at all: faster than no_grad
def greedy_decode(model: Transformer, src: torch.Tensor, max_new_tokens: int, use_cache: bool = True) -> torch.Tensor:
    """Batch greedy decoding. src (B, S) padded ids -> chosen ids (B, T), [PAD] after [EOS]."""
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask).memory  # (B, S, d_model)
    steps = [step.tokens for step in greedy_steps(model, memory, src_mask, max_new_tokens, use_cache)]
    return torch.stack(steps, dim=1)


def default_max_new_tokens(source_length: int) -> int:
    """A translation is rarely more than twice its source; never beyond the global limit."""
    return min(limits.MAX_TARGET_TOKENS, 2 * source_length + 10)


@torch.inference_mode()  # no autograd bookkeeping at all: faster than no_grad
def translate(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    text: str,
    direction: str,
    top_k: int = limits.TOP_K,
    max_new_tokens: int | None = None,
    forced_prefix: list[int] | None = None,
    ablation: Ablation | None = None,
) -> TranslationTrace:
    """Translate one sentence greedily and return the whole trace (see model/decoding/trace.py).

    forced_prefix: target ids imposed at the first steps (branching: "what if the model had
    chosen this token here?"); greedy decoding continues after them.
    ablation: heads switched off and/or positional encodings removed (model/decoding/ablation.py).
    """
    model.eval()
    config = model.config
    device = model.embedding.weight.device
    source_ids, was_cut = prepare_source(tokenizer, text, direction)
    tensors = (ablation or Ablation()).tensors(config, device)
    source = encode_source(model, source_ids, tensors)  # written out: the trace keeps its weights

    budget = max_new_tokens if max_new_tokens is not None else default_max_new_tokens(len(source_ids))
    forced = [int(i) for i in forced_prefix or []][:budget]
    imposed = False  # the length limit wrote the end (force_eos_at_limit) where the model chose another token
    if forced and forced[-1] == config.eos_id or len(forced) >= budget:
        output_ids = forced
    else:
        prefix = torch.tensor([forced], dtype=torch.long, device=device) if forced else None
        steps = list(
            greedy_steps(
                model,
                source.encoded.memory,
                source.src_mask,
                budget - len(forced),
                prefix=prefix,
                ablation=tensors,
                full_logits=False,
            )
        )
        output_ids = forced + [int(step.tokens[0]) for step in steps]
        imposed = bool(steps) and bool(steps[-1].imposed[0])

    # One teacher-forced pass over the chosen tokens gives every layer's attention at once.
    forced_pass = teacher_force(model, source, output_ids, tensors)
    stopped_by = "eos_at_limit" if imposed else "eos" if output_ids[-1] == config.eos_id else "max_length"
    return build_trace(
        model, tokenizer, text, direction, was_cut, forced_pass, output_ids, top_k, len(forced), ablation, stopped_by
    )
