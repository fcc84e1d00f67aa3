"""Shared by the corpus analyses' tests: the tiny model in float64, and one small corpus computation."""

from __future__ import annotations

import pytest

from model import load_checkpoint
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads


@pytest.fixture
def double_model(tiny_model):
    return tiny_model.double()


@pytest.fixture(scope="session")
def corpus_settings() -> CorpusSettings:
    """A few sentences per computation: seconds on one CPU."""
    return CorpusSettings(importance_sentences=3, prune_sentences=3, map_sentences=3, prune_points=3, batch_size=4)


@pytest.fixture(scope="session")
def corpus(tiny_checkpoint, pairs, corpus_settings):
    """(checkpoint, CorpusHeads) of the tiny checkpoint over the test pairs."""
    checkpoint = load_checkpoint(tiny_checkpoint)
    data = compute_corpus_heads(checkpoint.model, checkpoint.tokenizer, pairs, corpus_settings, log=lambda *_: None)
    return checkpoint, data
