"""Encoder input preparation: a sentence to ids (3.4's shared vocabulary, the tag naming the target
language first), and right-padded batches for the padding masks of section 3.2.3."""

from __future__ import annotations

import torch

from model.text import limits
from model.text.tokenizer import SubwordTokenizer, parse_direction


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
