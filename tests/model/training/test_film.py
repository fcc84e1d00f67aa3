"""The training film (model/training/film.py): a frame per evaluation of a tiny CPU run, equal to a fresh trace.

Provenance: the last frame's attention is compared with `translate()` of the probe by the weights
saved at that step (OUT/last), an independent run of the model.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from model import load_checkpoint
from model.training import film
from model.decoding.greedy import translate

FLOAT16_TOLERANCE = 2e-3  # weights in [0, 1] keep ~3 significant digits in float16


def test_one_frame_per_evaluation_with_step_and_bleu(film_run):
    frames = film.load_film(film_run / film.FILM_FILE)
    log = json.loads((film_run / "last" / "training_log.json").read_text())
    assert [f["step"] for f in frames] == log["validation"]["step"] == [10, 20]
    for frame, de_en, en_de in zip(frames, log["validation"]["bleu_de_en"], log["validation"]["bleu_en_de"]):
        assert frame["val_bleu"] == pytest.approx({"de-en": de_en, "en-de": en_de}, abs=1e-3)
        assert set(frame["probes"]) == set(film.PROBES)


def test_frames_have_the_shapes_of_their_tokens(film_run):
    for frame in film.load_film(film_run / film.FILM_FILE):
        for direction, probe in frame["probes"].items():
            assert probe["source_text"] == film.PROBES[direction] and probe["direction"] == direction
            n_source, n_target = len(probe["source_tokens"]), len(probe["target_tokens"])
            assert probe["encoder_attention"].shape == (2, 4, n_source, n_source)
            assert probe["decoder_self_attention"].shape == (1, 4, n_target, n_target)
            assert probe["cross_attention"].shape == (1, 4, n_target, n_source)
            assert probe["candidate_probs"].shape[0] == n_target == len(probe["candidate_tokens"])
            assert n_target <= film.FILM_MAX_NEW_TOKENS
            assert np.allclose(probe["cross_attention"].sum(-1), 1.0, atol=1e-2)  # rows are softmaxes


def test_last_frame_equals_a_fresh_translation_by_the_saved_weights(film_run):
    checkpoint = load_checkpoint(film_run / "last")  # saved at step 20, the last evaluation
    last = film.load_film(film_run / film.FILM_FILE)[-1]
    assert last["step"] == 20
    for probe, trace in probes_and_fresh_traces(last, checkpoint):
        assert probe["output_tokens"] == trace.output_tokens and probe["translation"] == trace.translation
        assert probe["candidate_tokens"] == trace.candidate_tokens
        assert_same_arrays(probe, trace)


def probes_and_fresh_traces(frame: dict, checkpoint):
    """(the frame's probe, a fresh greedy trace of the same probe sentence by `checkpoint`) per direction."""
    for direction, text in film.PROBES.items():
        yield (
            frame["probes"][direction],
            translate(checkpoint.model, checkpoint.tokenizer, text, direction, max_new_tokens=film.FILM_MAX_NEW_TOKENS),
        )


def assert_same_arrays(probe: dict, trace) -> None:
    for name in film.ARRAY_FIELDS:
        assert np.allclose(probe[name], getattr(trace, name), atol=FLOAT16_TOLERANCE, rtol=1e-3), name


def peaked_attention(rng, *shape) -> np.ndarray:
    """Random softmax rows as peaked as a trained model's (worse for compression than uniform ones)."""
    logits = rng.normal(scale=4.0, size=shape)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)


def test_thirty_frames_of_the_gpu_recipe_stay_under_5_mb(tmp_path):
    """Worst case: 6 + 6 layers x 8 heads, every probe decoded to FILM_MAX_NEW_TOKENS (no [EOS] yet)."""
    rng = np.random.default_rng(0)
    layers, heads, steps, k = 6, 8, film.FILM_MAX_NEW_TOKENS, 10
    frame_probes = {}
    for direction, n_source in (("de-en", 11), ("en-de", 14)):
        frame_probes[direction] = {
            "direction": direction,
            "source_text": film.PROBES[direction],
            "translation": "x " * steps,
            "source_tokens": ["▁tok"] * n_source,
            "target_tokens": ["▁tok"] * steps,
            "output_tokens": ["▁tok"] * steps,
            "candidate_tokens": [["▁tok"] * k] * steps,
            "encoder_attention": peaked_attention(rng, layers, heads, n_source, n_source),
            "decoder_self_attention": np.tril(peaked_attention(rng, layers, heads, steps, steps)),
            "cross_attention": peaked_attention(rng, layers, heads, steps, n_source),
            "candidate_probs": rng.random((steps, k)),
            "chosen_probs": rng.random(steps),
            "entropy": rng.random(steps) * 8,
        }
    path = tmp_path / film.FILM_FILE
    film.save(
        path,
        [{"step": 400 * (i + 1), "val_bleu": {"de-en": 1.0, "en-de": 2.0}, "probes": frame_probes} for i in range(30)],
    )
    size = path.stat().st_size
    assert size < 5 * 1024 * 1024, f"{size / 1e6:.2f} MB"  # measured: 4.2 MB (worst case: no [EOS] in any frame)
    loaded = film.load_film(path)
    assert len(loaded) == 30 and np.allclose(
        loaded[29]["probes"]["en-de"]["cross_attention"],
        frame_probes["en-de"]["cross_attention"],
        atol=FLOAT16_TOLERANCE,
    )


def test_append_adds_frames_in_order(tmp_path, tiny_model, tiny_tokenizer):
    path = tmp_path / "film.npz"
    for step in (5, 10):
        film.append(path, film.record_frame(tiny_model, tiny_tokenizer, step, {"de-en": 0.5, "en-de": 0.25}))
    frames = film.load_film(path)
    assert [f["step"] for f in frames] == [5, 10] and frames[1]["val_bleu"] == {"de-en": 0.5, "en-de": 0.25}
    assert not list(tmp_path.glob("*.partial*"))  # written atomically, nothing left behind


def test_a_file_that_is_not_a_film_is_refused(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, weights=np.zeros(3))
    with pytest.raises(ValueError, match="not a training film"):
        film.load_film(path)


def test_the_shipped_checkpoint_has_its_film_from_random_weights_to_its_own_weights():
    """ "Heads forming" shows the shipped model's film: it starts near random weights, stays under
    5 MB, and its frame at the shipped step is the shipped weights' own attention on the probe sentences."""
    from model.checkpoints.paths import DEFAULT_CHECKPOINT

    shipped = load_checkpoint(DEFAULT_CHECKPOINT)
    path = film.find_film(DEFAULT_CHECKPOINT)
    assert path is not None and path.parent == DEFAULT_CHECKPOINT and path.stat().st_size <= 5 * 1000 * 1000
    frames = film.load_film(path)
    steps = [frame["step"] for frame in frames]
    assert steps == sorted(steps) and steps[0] <= 1000 and len(frames) >= 10  # from the first evaluations on
    frame = frames[steps.index(shipped.metrics["step"])]
    for probe, trace in probes_and_fresh_traces(frame, shipped):
        assert probe["output_tokens"] == trace.output_tokens
        assert_same_arrays(probe, trace)
