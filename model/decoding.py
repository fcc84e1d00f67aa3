"""Greedy decoding with a KV cache, and `translate`, which returns a full TranslationTrace.

Greedy decoding picks the most probable next token at every step. With the cache, each step
feeds only the newest token to the decoder: self-attention keys/values of earlier positions are
reused (they never change, thanks to the causal mask, 3.2.3) and cross-attention keys/values are
computed once from the encoder memory.

`translate` runs the model once per sentence: encode, greedy steps with the cache, then one
teacher-forced pass over the chosen tokens that returns every attention matrix of every layer
and the next-token distributions (identical to the cached steps' logits; a test checks this).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import torch

from . import limits
from .ablation import Ablation
from .layers import DecoderCache
from .masks import causal_mask, decoder_mask, padding_mask
from .tokenizer import PAD, SubwordTokenizer, parse_direction
from .trace import TranslationTrace
from .transformer import Transformer

# A longer sentence per source language, batched with the user's to show a real padding mask.
PADDING_EXAMPLES = {
    "de": "Eine Gruppe von Menschen steht vor einem großen Gebäude und wartet auf den Bus.",
    "en": "A group of people is standing in front of a large building and waiting for the bus.",
}


# The trace keeps at least this many positional-encoding rows, so the sinusoids read as waves.
MIN_PE_ROWS = 64
LOGIT_LENS_K = 5  # tokens kept per decoder layer and step in the logit lens


class GreedyStep(NamedTuple):
    logits: torch.Tensor  # (B, V) next-token logits at this step
    tokens: torch.Tensor  # (B,) chosen ids ([PAD] for sequences that already ended)
    finished: torch.Tensor  # (B,) True once a sequence has produced [EOS]


def greedy_steps(
    model: Transformer,
    memory: torch.Tensor,
    src_mask: torch.Tensor,
    max_new_tokens: int,
    use_cache: bool = True,
    prefix: torch.Tensor | None = None,
    ablation: Ablation | None = None,
) -> Iterator[GreedyStep]:
    """Yield one GreedyStep per decoding step until every sequence ends or max_new_tokens.

    memory (B, S, d_model) and src_mask (B, 1, 1, S) come from `model.encode`.
    prefix (B, P): tokens forced after [BOS] before greedy choice begins (branching); not yielded.
    use_cache=False recomputes the whole prefix at every step (the reference the cache must match).
    """
    config = model.config
    batch = memory.size(0)
    bos = torch.full((batch, 1), config.bos_id, dtype=torch.long, device=memory.device)
    tokens_so_far = bos if prefix is None else torch.cat([bos, prefix.to(memory.device)], dim=1)  # (B, 1 + P)
    finished = torch.zeros(batch, dtype=torch.bool, device=memory.device)
    cache = DecoderCache.empty(len(model.decoder_layers)) if use_cache else None
    max_new_tokens = min(max_new_tokens, config.max_positions - tokens_so_far.size(1))
    for _ in range(max_new_tokens):
        if cache is not None:
            # feed only positions not cached yet: the whole forced prefix at first, then one token
            new = tokens_so_far[:, cache.length:]  # (B, T_new)
            mask = decoder_mask(new, config.pad_id) if cache.length == 0 else None
            hidden = model.decode(new, memory, src_mask, mask, cache, ablation).hidden  # (B, T_new, d)
        else:
            mask = decoder_mask(tokens_so_far, config.pad_id)
            hidden = model.decode(tokens_so_far, memory, src_mask, mask, None, ablation).hidden
        logits = model.project(hidden[:, -1])  # (B, V)
        tokens = logits.argmax(dim=-1).masked_fill(finished, config.pad_id)  # (B,)
        finished = finished | (tokens == config.eos_id)
        yield GreedyStep(logits, tokens, finished)
        if bool(finished.all()):
            return
        tokens_so_far = torch.cat([tokens_so_far, tokens[:, None]], dim=1)  # (B, t + 1)


@torch.inference_mode()  # no autograd bookkeeping at all: faster than no_grad
def greedy_decode(model: Transformer, src: torch.Tensor, max_new_tokens: int, use_cache: bool = True) -> torch.Tensor:
    """Batch greedy decoding. src (B, S) padded ids -> chosen ids (B, T), [PAD] after [EOS]."""
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask).memory
    steps = [step.tokens for step in greedy_steps(model, memory, src_mask, max_new_tokens, use_cache)]
    return torch.stack(steps, dim=1)


def default_max_new_tokens(source_length: int) -> int:
    """A translation is rarely more than twice its source; never beyond the global limit."""
    return min(limits.MAX_TARGET_TOKENS, 2 * source_length + 10)


def prepare_source(tokenizer: SubwordTokenizer, text: str, direction: str) -> tuple[list[int], bool]:
    """Encoder ids [<2xx>] + subwords + [EOS], cut to MAX_SOURCE_TOKENS subwords. -> (ids, was_cut)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if len(text) > limits.MAX_INPUT_CHARS:
        raise ValueError(f"text is {len(text)} characters long; the limit is {limits.MAX_INPUT_CHARS}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate (JSON "\ud800") cannot be tokenized
        raise ValueError(f"text is not valid Unicode: a lone surrogate U+{ord(text[error.start]):04X} "
                         f"at character {error.start + 1}") from None
    _, target = parse_direction(direction)
    subwords = tokenizer.encode(text.strip())  # outer whitespace carries no meaning for translation
    was_cut = len(subwords) > limits.MAX_SOURCE_TOKENS
    subwords = subwords[: limits.MAX_SOURCE_TOKENS]
    return tokenizer.frame_source(subwords, target), was_cut


def pad_batch(sequences: list[list[int]], pad_id: int) -> torch.Tensor:
    """Right-pad id lists to one tensor (B, S_max)."""
    width = max(len(s) for s in sequences)
    return torch.tensor([s + [pad_id] * (width - len(s)) for s in sequences], dtype=torch.long)


def _numpy(attentions: list, part: str) -> np.ndarray:
    """Stack one part ('weights' or 'scores') of per-layer AttentionOutputs of a single sentence.

    list of L x (1, h, Tq, Tk) -> (L, h, Tq, Tk) float32.
    """
    return torch.stack([getattr(a, part)[0] for a in attentions]).float().cpu().numpy()


def logit_lens(model: Transformer, layer_hiddens: list[torch.Tensor], final_probs: torch.Tensor):
    """Top LOGIT_LENS_K tokens read from every decoder layer's output through the final projection.

    Post-LN layers end in a LayerNorm, so each layer output is already normalised like the last
    one: no extra norm is applied. The last layer's output is the decoder output, whose
    distribution (final_probs (T, V)) is reused; top-k is taken on logits and normalised with
    logsumexp, without a softmax over (T, L, V).
    layer_hiddens: L x (1, T, d_model) -> probabilities (T, L, k), ids (T, L, k).
    """
    k = min(LOGIT_LENS_K, final_probs.size(-1))
    last_probs, last_ids = final_probs.topk(k, dim=-1)  # (T, k)
    if len(layer_hiddens) == 1:
        return last_probs[:, None], last_ids[:, None]
    logits = model.project(torch.stack([h[0] for h in layer_hiddens[:-1]], dim=1)).float()  # (T, L-1, V)
    top_logits, top_ids = logits.topk(k, dim=-1)  # (T, L-1, k)
    top_probs = (top_logits - logits.logsumexp(dim=-1, keepdim=True)).exp()
    return torch.cat([top_probs, last_probs[:, None]], dim=1), torch.cat([top_ids, last_ids[:, None]], dim=1)


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
    """Translate one sentence greedily and return the whole trace (see model/trace.py).

    forced_prefix: target ids imposed at the first steps (branching: "what if the model had
    chosen this token here?"); greedy decoding continues after them.
    ablation: heads switched off and/or positional encodings removed (model/ablation.py).
    """
    model.eval()
    config = model.config
    device = model.embedding.weight.device
    source_ids, was_cut = prepare_source(tokenizer, text, direction)
    src = torch.tensor([source_ids], device=device)  # (1, S)
    src_mask = padding_mask(src, config.pad_id)  # (1, 1, 1, S)
    encoded = model.encode(src, src_mask, ablation)

    budget = max_new_tokens if max_new_tokens is not None else default_max_new_tokens(len(source_ids))
    forced = [int(i) for i in forced_prefix or []][:budget]
    if forced and forced[-1] == config.eos_id or len(forced) >= budget:
        output_ids = forced
    else:
        prefix = torch.tensor([forced], dtype=torch.long, device=device) if forced else None
        steps = greedy_steps(model, encoded.memory, src_mask, budget - len(forced), prefix=prefix, ablation=ablation)
        output_ids = forced + [int(step.tokens[0]) for step in steps]

    # One teacher-forced pass over the chosen tokens gives every layer's attention at once.
    target_ids = [config.bos_id, *output_ids[:-1]]
    tgt = torch.tensor([target_ids], device=device)  # (1, T)
    tgt_mask = decoder_mask(tgt, config.pad_id)  # (1, 1, T, T)
    decoded = model.decode(tgt, encoded.memory, src_mask, tgt_mask, None, ablation)
    log_probs = torch.log_softmax(model.project(decoded.hidden)[0].float(), dim=-1)  # (T, V)
    probs = log_probs.exp()
    top_probs, top_ids = probs.topk(min(top_k, probs.size(-1)), dim=-1)  # (T, k)
    entropy = -(probs * log_probs).sum(-1) / math.log(2)  # (T,) bits
    lens_top_probs, lens_top_ids = logit_lens(model, decoded.layer_hiddens, probs)  # (T, L, 5)
    chosen = torch.tensor(output_ids, device=device)

    _, target_language = parse_direction(direction)
    source_language = "en" if target_language == "de" else "de"
    batch_ids = [source_ids, prepare_source(tokenizer, PADDING_EXAMPLES[source_language], direction)[0]]
    batch = pad_batch(batch_ids, config.pad_id)  # (2, S_batch)
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
        decoder_mask=tgt_mask[0, 0].cpu().numpy(),
        cross_mask=src_mask[0, 0].expand(n_target, n_source).cpu().numpy(),
        batch_tokens=[[PAD if i == config.pad_id else tokenizer.id_to_token(i) for i in row] for row in batch.tolist()],
        batch_padding_mask=padding_mask(batch, config.pad_id)[:, 0, 0].numpy(),
        positional_encoding=model.positional_encoding[: max(n_source, n_target, MIN_PE_ROWS)].cpu().numpy(),
        logit_lens_tokens=[[tokenizer.tokens(row) for row in layer] for layer in lens_top_ids.tolist()],
        logit_lens_probs=lens_top_probs.cpu().numpy(),
        source_truncated=was_cut,
        forced_steps=len(forced),
        ablation=(ablation or Ablation()).describe(),
        stopped_by="eos" if output_ids[-1] == config.eos_id else "max_length",
    )
