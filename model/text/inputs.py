"""Encoder input preparation: a sentence to ids (3.4's shared vocabulary, the tag naming the target
language first), and right-padded batches for the padding masks of section 3.2.3."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from model.core.masks import padding_mask
from model.text import limits
from model.text.tokenizer import PAD, SubwordTokenizer, parse_direction

# A longer sentence per source language, batched with the user's to show a real padding mask.
PADDING_EXAMPLES = {
    "de": "Eine Gruppe von Menschen steht vor einem großen Gebäude und wartet auf den Bus.",
    "en": "A group of people is standing in front of a large building and waiting for the bus.",
}


def prepare_source(tokenizer: SubwordTokenizer, text: str, direction: str) -> tuple[list[int], bool]:
    """Encoder ids [<2xx>] + subwords + [EOS], cut to MAX_SOURCE_TOKENS subwords. -> (ids, was_cut)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if len(text) > limits.MAX_INPUT_CHARS:
        raise ValueError(f"text is {len(text)} characters long; the limit is {limits.MAX_INPUT_CHARS}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate (JSON "\ud800") cannot be tokenized
        raise ValueError(
            f"text is not valid Unicode: a lone surrogate U+{ord(text[error.start]):04X} at character {error.start + 1}"
        ) from None
    _, target = parse_direction(direction)
    subwords = tokenizer.encode(text.strip())  # outer whitespace carries no meaning for translation
    was_cut = len(subwords) > limits.MAX_SOURCE_TOKENS
    subwords = subwords[: limits.MAX_SOURCE_TOKENS]
    return tokenizer.frame_source(subwords, target), was_cut


def pad_batch(sequences: list[list[int]], pad_id: int) -> torch.Tensor:
    """Right-pad id lists to one tensor (B, S_max)."""
    width = max(len(s) for s in sequences)
    return torch.tensor([s + [pad_id] * (width - len(s)) for s in sequences], dtype=torch.long)


class PaddedBatch(NamedTuple):
    """A right-padded batch as the encoder receives it, for the Masks view's padding panel (3.2.3)."""

    tokens: list[list[str]]  # B x S_batch, [PAD] where padded
    mask: np.ndarray  # (B, S_batch) bool, True = real token: model.core.masks.padding_mask of the batch


def padding_example(tokenizer: SubwordTokenizer, source_ids: list[int], direction: str, pad_id: int) -> PaddedBatch:
    """`source_ids` batched with PADDING_EXAMPLES' sentence of the same source language, padded and masked
    as every training batch is (pad_batch, padding_mask): one sentence alone has no padding to show."""
    _, target_language = parse_direction(direction)
    source_language = "en" if target_language == "de" else "de"
    example_ids, _ = prepare_source(tokenizer, PADDING_EXAMPLES[source_language], direction)
    batch = pad_batch([list(source_ids), example_ids], pad_id)  # (2, S_batch)
    tokens = [[PAD if i == pad_id else tokenizer.id_to_token(i) for i in row] for row in batch.tolist()]
    return PaddedBatch(tokens, padding_mask(batch, pad_id)[:, 0, 0].numpy())  # (2, 1, 1, S_batch) -> (2, S_batch)
