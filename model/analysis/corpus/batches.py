"""The corpus as teacher-forced batches (section 5.1: "sentence pairs were batched together by
approximate sequence length"): each pair in both directions, the target-language tag first.

The corpus figures read Multi30k val (`../shared/data/multi30k/val`); tests pass their own pairs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import torch

from model.text import limits
from model.training.data import Example, Pair, collate, make_examples
from model.text.tokenizer import SubwordTokenizer


class Batch(NamedTuple):
    src: torch.Tensor  # (B, S) encoder ids, right-padded
    tgt_in: torch.Tensor  # (B, T) decoder input: [BOS] + y[:-1]
    labels: torch.Tensor  # (B, T) y: the decoder input shifted left
    indices: list[int]  # which examples, in the order of the rows


def corpus_examples(
    pairs: Sequence[Pair], tokenizer: SubwordTokenizer, sentences: int | None = None
) -> tuple[list[Example], list[str]]:
    """The first `sentences` pairs (None = all), each as German->English and English->German examples,
    and each example's reference translation (the raw target text, for BLEU).

    Pairs with a side longer than MAX_SOURCE_TOKENS subwords are dropped (the app cuts there too).
    Examples alternate: de->en, en->de, de->en, ...
    """
    chosen = list(pairs)[:sentences] if sentences is not None else list(pairs)
    examples, references = [], []
    for german, english in chosen:
        both = make_examples([(german, english)], tokenizer, limits.MAX_SOURCE_TOKENS)  # [de->en, en->de] or []
        examples += both
        references += [english, german][: len(both)]
    return examples, references


def direction_of(example: Example, tokenizer: SubwordTokenizer) -> str:
    """ "de-en" or "en-de" from the language tag that opens the source."""
    return "de-en" if example.source[0] == tokenizer.language_tag_id("en") else "en-de"


def batches(examples: Sequence[Example], batch_size: int, pad_id: int) -> Iterator[Batch]:
    """Batches of `batch_size` examples of similar source length (less padding); every example once."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i].source), len(examples[i].target)))
    for start in range(0, len(order), batch_size):
        indices = order[start : start + batch_size]
        src, tgt_in, labels = collate(list(examples), indices, pad_id)
        yield Batch(src, tgt_in, labels, indices)
