"""model/analysis/heads_forming.py: entropy and sharpness over a training film, on hand-made frames whose
values are known (uniform = 0 sharpness, one-hot = 1) and on frames built from real tiny-model traces.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.decoding.greedy import translate
from model.analysis.heads_forming import allowed_keys, film_summary, head_entropy_and_sharpness

L, H, S, T = 2, 3, 4, 3


def causal_uniform(n: int) -> np.ndarray:
    rows = np.tril(np.ones((n, n)))
    return rows / rows.sum(-1, keepdims=True)


def one_hot(n_queries: int, n_keys: int) -> np.ndarray:
    weights = np.zeros((n_queries, n_keys))
    weights[:, 0] = 1.0
    return weights


def probe(sharp: bool) -> dict:
    """Uniform attention everywhere, or one-hot everywhere (every row on its first key)."""
    encoder = one_hot(S, S) if sharp else np.full((S, S), 1 / S)
    self_ = one_hot(T, T) if sharp else causal_uniform(T)
    cross = one_hot(T, S) if sharp else np.full((T, S), 1 / S)
    tile = lambda a: np.broadcast_to(a, (L, H, *a.shape)).copy()  # noqa: E731
    return {
        "encoder_attention": tile(encoder),
        "decoder_self_attention": tile(self_),
        "cross_attention": tile(cross),
        "translation": "sharp" if sharp else "uniform",
        "source_tokens": ["t"] * S,
        "target_tokens": ["u"] * T,
    }


FRAMES = [
    {"step": 0, "val_bleu": {"de-en": 0.0, "en-de": 1.0}, "probes": {"de-en": probe(False)}},
    {"step": 500, "val_bleu": {"de-en": 12.5, "en-de": 9.0}, "probes": {"de-en": probe(True)}},
]


def test_uniform_frames_have_full_entropy_and_no_sharpness():
    summary = film_summary(FRAMES, "de-en")
    np.testing.assert_array_equal(summary.steps, [0, 500])
    np.testing.assert_allclose(summary.val_bleu, [0.0, 12.5])
    assert summary.translations == ["uniform", "sharp"]
    assert summary.entropy["encoder"].shape == (2, L, H)
    np.testing.assert_allclose(summary.entropy["encoder"][0], np.log2(S), atol=1e-6)
    np.testing.assert_allclose(summary.entropy["cross"][0], np.log2(S), atol=1e-6)
    # causal rows are uniform over 1, 2, 3 keys: mean of log2(1), log2(2), log2(3)
    np.testing.assert_allclose(summary.entropy["decoder_self"][0], np.mean(np.log2([1, 2, 3])), atol=1e-6)
    for kind in ("encoder", "decoder_self", "cross"):
        np.testing.assert_allclose(summary.sharpness[kind], [0.0, 1.0], atol=1e-6)
        np.testing.assert_allclose(summary.entropy[kind][1], 0.0, atol=1e-6)


def test_sharpness_of_a_half_sharp_head():
    weights = np.array([[[[0.5, 0.5, 0.0, 0.0]]]])  # 1 bit over 4 keys: sharpness 1 - 1/2
    entropy, sharpness = head_entropy_and_sharpness(weights, "cross")
    np.testing.assert_allclose(entropy, [[1.0]], atol=1e-6)
    np.testing.assert_allclose(sharpness, [[0.5]], atol=1e-6)
    np.testing.assert_array_equal(allowed_keys("decoder_self", 3, 3), [1, 2, 3])


def test_frame_index_finds_the_frame_shown_at_a_step():
    summary = film_summary(FRAMES, "de-en")
    assert [summary.frame_index(step) for step in (0, 499, 500, 10_000)] == [0, 0, 1, 1]


def test_frames_from_real_traces(tiny_model, tiny_tokenizer, tiny_config):
    """Traces of the tiny model may differ in length from frame to frame; the layer x head grid may not."""
    frames = []
    for step, text in enumerate(["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee."]):
        trace = translate(tiny_model, tiny_tokenizer, text, "de-en", max_new_tokens=4 + step)
        frames.append(
            {
                "step": 100 * step,
                "val_bleu": {"de-en": float(step)},
                "probes": {
                    "de-en": {
                        "encoder_attention": trace.encoder_attention,
                        "decoder_self_attention": trace.decoder_self_attention,
                        "cross_attention": trace.cross_attention,
                        "translation": trace.translation,
                        "source_tokens": trace.source_tokens,
                        "target_tokens": trace.target_tokens,
                    }
                },
            }
        )
    summary = film_summary(frames, "de-en")
    assert summary.entropy["decoder_self"].shape == (2, tiny_config.n_decoder_layers, tiny_config.n_heads)
    w = frames[1]["probes"]["de-en"]["encoder_attention"].astype(np.float64)
    expected = -(w * np.log2(w)).sum(-1).mean(-1)  # an independent entropy of the second frame
    np.testing.assert_allclose(summary.entropy["encoder"][1], expected, atol=1e-4)
    assert ((summary.sharpness["cross"] >= 0) & (summary.sharpness["cross"] <= 1)).all()


@pytest.mark.parametrize(
    "frames, message",
    [
        ([], "no frames"),
        ([{"probes": {}}], "must be a dict with 'step'"),
        ([FRAMES[1], FRAMES[0]], "increasing steps"),
        ([{"step": 0, "probes": {"en-de": {}}}], "no probe for 'de-en'"),
        ([{"step": 0, "probes": {"de-en": {"translation": ""}}}], "lacks 'encoder_attention'"),
    ],
)
def test_malformed_films_get_a_clear_message(frames, message):
    with pytest.raises(ValueError, match=message):
        film_summary(frames, "de-en")


def test_a_changed_head_grid_gets_a_clear_message():
    other = probe(True)
    other["encoder_attention"] = other["encoder_attention"][:1]
    with pytest.raises(ValueError, match="layers x heads"):
        film_summary([FRAMES[0], {"step": 9, "val_bleu": {"de-en": 1.0}, "probes": {"de-en": other}}], "de-en")


def test_a_one_token_probe_has_no_decoder_self_sharpness_and_no_warning(recwarn):
    """An untrained model that stops at once: one decoder row with one key, no uniform alternative."""
    short = {
        **probe(True),
        "decoder_self_attention": np.ones((L, H, 1, 1)),
        "cross_attention": probe(True)["cross_attention"][:, :, :1],
    }
    frames = [{"step": 1, "val_bleu": {"de-en": 0.0}, "probes": {"de-en": short}}, FRAMES[1]]
    summary = film_summary(frames, "de-en")
    assert np.isnan(summary.sharpness["decoder_self"][0]) and summary.sharpness["decoder_self"][1] == pytest.approx(1.0)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
