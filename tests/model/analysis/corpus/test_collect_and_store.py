"""model/analysis/corpus/collect.py and store.py: the corpus computation has every head, its file round-trips
and tells missing, stale and unreadable files apart, and the shipped checkpoint's file is today's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from model import load_checkpoint
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.roles import role_labels
from model.analysis.corpus.store import CORPUS_FILE, corpus_status, save_corpus, weights_hash
from scripts.corpus_heads import role_count_lines

ROOT = Path(__file__).resolve().parents[4]
SHIPPED = ROOT / "checkpoints" / "de-en-small"


def test_corpus_figures_have_every_head(corpus):
    checkpoint, data = corpus
    config = checkpoint.config
    assert data.stats["encoder"]["previous"].shape == (config.n_encoder_layers, config.n_heads)
    assert data.roles["cross"].shape == (config.n_decoder_layers, config.n_heads)
    assert len(data.pruning.order) == 3 * 2 * 4 and data.pruning.pruned[[0, -1]].tolist() == [0, 24]
    assert data.pruning.bleu_random.shape == (1, len(data.pruning.pruned))
    head_map = data.maps["cross"]
    assert head_map.coords.shape[:3] == (2, 4, head_map.n_queries + len(head_map.key_tokens))
    assert set(head_map.query_tokens) >= {"[BOS]"} and "[EOS]" in set(head_map.key_tokens)


def test_corpus_file_round_trips_and_detects_stale_weights(corpus, tmp_path):
    checkpoint, data = corpus
    path = save_corpus(tmp_path / CORPUS_FILE, data)
    assert path.stat().st_size < 5_000_000
    loaded, problem = corpus_status(path, checkpoint.model)
    assert problem == "" and loaded.weights_hash == weights_hash(checkpoint.model)
    for kind in KINDS:
        np.testing.assert_array_equal(loaded.roles[kind], data.roles[kind])
        np.testing.assert_allclose(loaded.importance[kind], data.importance[kind])
        for name, values in data.stats[kind].items():
            np.testing.assert_allclose(loaded.stats[kind][name], values)
        np.testing.assert_allclose(loaded.maps[kind].coords, data.maps[kind].coords, rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(loaded.maps[kind].key_tokens, data.maps[kind].key_tokens)
    np.testing.assert_allclose(loaded.pruning.bleu_importance, data.pruning.bleu_importance)
    assert loaded.settings["examples"] == data.settings["examples"]
    assert corpus_status(tmp_path / "none.npz", checkpoint.model) == (None, "missing")
    changed = dataclasses.replace(checkpoint).model
    with torch.no_grad():
        changed.decoder_layers[0].feed_forward.linear1.weight[0, 0] += 1e-3
    try:
        assert corpus_status(path, changed) == (None, "stale")
    finally:
        with torch.no_grad():
            changed.decoder_layers[0].feed_forward.linear1.weight[0, 0] -= 1e-3
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert corpus_status(tmp_path / "bad.npz", checkpoint.model)[1].startswith("unreadable")


def test_the_shipped_corpus_file_is_current_and_docs_views_gives_its_role_counts():
    """checkpoints/de-en-small/corpus_heads.npz matches the weights, has every stat of today's roles, its roles are
    what today's rules make of its stats, and docs/views.md records the counts the command printed for it."""
    if not (SHIPPED / "config.json").exists():
        pytest.skip("no shipped checkpoint in this checkout")
    checkpoint = load_checkpoint(SHIPPED)
    data, problem = corpus_status(SHIPPED / CORPUS_FILE, checkpoint.model)
    assert problem == "" and data.lacking == {}
    for kind in KINDS:
        np.testing.assert_array_equal(data.roles[kind], role_labels(data.stats[kind]), err_msg=kind)
    views = (ROOT / "docs" / "views.md").read_text()
    for line in role_count_lines(data):
        assert f"  {line}\n" in views, line
