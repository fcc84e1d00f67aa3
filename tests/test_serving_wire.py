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


def test_the_lean_trace_rebuilds_the_full_trace(trace, tiny_config):
    table = wire.positional_encoding_table(tiny_config)
    rebuilt = wire.trace_from_lean(wire.lean_trace_json(trace), table)
    assert_round_trip(trace, rebuilt, tolerance=wire.FLOAT_SCALE / 2 + 1e-6)
    assert np.array_equal(rebuilt.positional_encoding, trace.positional_encoding)  # exact, not rounded
    assert rebuilt.attention("cross", 2).weights.shape == trace.attention("cross", 2).weights.shape


def test_the_table_a_lean_trace_refers_to_is_the_models(tiny_model, tiny_config, trace):
    table = wire.positional_encoding_table(tiny_config)
    assert np.array_equal(table, tiny_model.positional_encoding.numpy())
    served = orjson.loads(wire.positional_encoding_json(table))
    assert served["ref"] == "pe" and (served["rows"], served["d_model"]) == table.shape
    np.testing.assert_allclose(served["table"], table, atol=5e-5)
    rebuilt = wire.trace_from_lean(wire.lean_trace_json(trace), np.asarray(served["table"]))  # a client's copy
    np.testing.assert_allclose(rebuilt.positional_encoding, trace.positional_encoding, atol=5e-5)


def test_the_lean_json_refers_to_the_table_and_stores_fixed_point(trace):
    data = orjson.loads(wire.lean_trace_json(trace))
    assert data["format"] == wire.LEAN_FORMAT
    assert data["positional_encoding"] == {"ref": "pe", "rows": trace.positional_encoding.shape[0]}
    assert "cross_attention" in data["fixed"] and data["float_scale"] == wire.FLOAT_SCALE
    weights = np.asarray(data["cross_attention"])
    assert weights.dtype.kind == "i"
    np.testing.assert_array_equal(weights, np.rint(trace.cross_attention.astype(np.float64) * 1e4))
    assert set(np.unique(data["decoder_mask"])) <= {0, 1}
    assert data["source_text"] == trace.source_text and data["output_tokens"] == trace.output_tokens


def test_the_lean_json_is_much_smaller(trace):
    full, lean = len(trace.to_json()), len(wire.lean_trace_json(trace))
    table = len(orjson.dumps(np.round(trace.positional_encoding, 4), option=orjson.OPT_SERIALIZE_NUMPY))
    assert lean < 0.7 * full and lean < 0.85 * (full - table)  # the table gone, and the rest smaller too


def test_non_finite_values_stay_floats_and_ablation_survives(tiny_model, tiny_tokenizer, tiny_config):
    trace = translate(tiny_model, tiny_tokenizer, "Ein Hund.", "de-en", max_new_tokens=5,
                      ablation=Ablation(cross_heads={(0, 1)}))
    entropy = trace.entropy.copy()
    entropy[0] = np.inf
    data = orjson.loads(wire.lean_trace_json(dataclasses.replace(trace, entropy=entropy)))
    assert "entropy" not in data["fixed"] and data["entropy"][0] is None  # JSON has no infinity
    np.testing.assert_allclose(data["entropy"][1:], entropy[1:], atol=5e-5)
    rebuilt = wire.trace_from_lean(wire.lean_trace_json(trace), wire.positional_encoding_table(tiny_config))
    assert rebuilt.ablation == trace.ablation and rebuilt.ablation["cross_heads"] == [[0, 1]]


def test_bad_lean_input_is_refused_clearly(trace, tiny_config):
    table = wire.positional_encoding_table(tiny_config)
    with pytest.raises(ValueError, match="not a lean trace"):
        wire.trace_from_lean(trace.to_json(), table)
    with pytest.raises(ValueError, match="needs .* positional-encoding rows; the table has 3"):
        wire.trace_from_lean(wire.lean_trace_json(trace), table[:3])
    with pytest.raises(ValueError, match=r"\(positions, d_model\)"):
        wire.positional_encoding_json(table[0])


def test_the_trace_size_command(tiny_checkpoint, capsys):
    from scripts import trace_size

    sizes = trace_size.main(["--checkpoint", str(tiny_checkpoint), "Zwei Hunde spielen im Schnee."])
    assert 0 < sizes["lean_bytes"] < sizes["full_bytes"]
    assert f"full {sizes['full_bytes']:,} bytes, lean {sizes['lean_bytes']:,} bytes" in capsys.readouterr().out
