"""serving/wire.py: the lean trace JSON refers to the positional-encoding table instead of repeating it,
stores floats as 4-decimal fixed point, and rebuilds the full TranslationTrace (arrays equal within
the rounding; positional encodings exact).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import orjson
import pytest

from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from serving import wire

TEXT = "Zwei Hunde spielen im Schnee, und ein Mann fährt mit dem Fahrrad die Straße entlang."


@pytest.fixture
def trace(tiny_model, tiny_tokenizer):
    return translate(tiny_model, tiny_tokenizer, TEXT, "de-en", max_new_tokens=20)


def assert_round_trip(original, rebuilt, tolerance: float) -> None:
    for field in dataclasses.fields(original):
        a, b = getattr(original, field.name), getattr(rebuilt, field.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape, field.name
            if a.dtype.kind == "f":
                np.testing.assert_allclose(b, a, rtol=0, atol=tolerance, err_msg=field.name)
            else:
                assert np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


def test_the_lean_trace_rebuilds_the_full_trace(trace):
    rebuilt = wire.trace_from_lean(wire.lean_trace_json(trace))
    assert_round_trip(trace, rebuilt, tolerance=wire.FLOAT_SCALE / 2 + 1e-6)
    assert rebuilt.attention("cross", 2).weights.shape == trace.attention("cross", 2).weights.shape


def test_the_served_table_is_the_models(tiny_model):
    table = tiny_model.positional_encoding.numpy()
    served = orjson.loads(wire.positional_encoding_json(table))
    assert (served["rows"], served["d_model"]) == table.shape
    np.testing.assert_allclose(served["table"], table, atol=5e-5)


def test_the_lean_json_holds_only_the_sentence_and_stores_fixed_point(trace):
    data = orjson.loads(wire.lean_trace_json(trace))
    assert data["format"] == wire.LEAN_FORMAT
    assert not {"positional_encoding", "batch_tokens", "batch_padding_mask"} & set(data)  # not of this sentence
    assert "cross_attention" in data["fixed"] and data["float_scale"] == wire.FLOAT_SCALE
    weights = np.asarray(data["cross_attention"])
    assert weights.dtype.kind == "i"
    np.testing.assert_array_equal(weights, np.rint(trace.cross_attention.astype(np.float64) * 1e4))
    assert set(np.unique(data["decoder_mask"])) <= {0, 1}
    assert data["source_text"] == trace.source_text and data["output_tokens"] == trace.output_tokens


def test_the_lean_json_is_much_smaller(trace):
    assert len(wire.lean_trace_json(trace)) < 0.85 * len(trace.to_json())


def test_non_finite_values_stay_floats_and_ablation_survives(tiny_model, tiny_tokenizer, tiny_config):
    trace = translate(
        tiny_model, tiny_tokenizer, "Ein Hund.", "de-en", max_new_tokens=5, ablation=Ablation(cross_heads={(0, 1)})
    )
    entropy = trace.entropy.copy()
    entropy[0] = np.inf
    data = orjson.loads(wire.lean_trace_json(dataclasses.replace(trace, entropy=entropy)))
    assert "entropy" not in data["fixed"] and data["entropy"][0] is None  # JSON has no infinity
    np.testing.assert_allclose(data["entropy"][1:], entropy[1:], atol=5e-5)
    rebuilt = wire.trace_from_lean(wire.lean_trace_json(trace))
    assert rebuilt.ablation == trace.ablation and rebuilt.ablation["cross_heads"] == [[0, 1]]


def test_bad_lean_input_is_refused_clearly(trace, tiny_model):
    with pytest.raises(ValueError, match="not a lean trace"):
        wire.trace_from_lean(trace.to_json())
    with pytest.raises(ValueError, match=r"\(positions, d_model\)"):
        wire.positional_encoding_json(tiny_model.positional_encoding.numpy()[0])


def test_the_trace_size_command(tiny_checkpoint, capsys):
    from scripts import trace_size

    sizes = trace_size.main(["--checkpoint", str(tiny_checkpoint), "Zwei Hunde spielen im Schnee."])
    assert 0 < sizes["lean_bytes"] < sizes["full_bytes"]
    assert f"full {sizes['full_bytes']:,} bytes, lean {sizes['lean_bytes']:,} bytes" in capsys.readouterr().out
