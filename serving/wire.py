"""The lean trace JSON: what a client downloads per translation, without the parts that never change.

The full `TranslationTrace.to_json()` repeats the positional-encoding table (section 3.5), the same
for every sentence of a checkpoint and 34% of the JSON (issue 15), and writes every weight as a
decimal float. The lean form differs in three ways, and `trace_from_lean` undoes all three:

- "positional_encoding" is a reference, {"ref": "pe", "rows": P}: rows 0..P-1 of the checkpoint's
  table, served once (`positional_encoding_json`) or rebuilt from the config
  (`positional_encoding_table`: the sinusoids are a function of max_positions and d_model).
- Float arrays are fixed-point integers in units of "float_scale" (1e-4, the 4 decimals that
  to_json keeps): 0.1235 -> 1235 and an exact 0 (a masked weight) -> 0, half the characters of
  "0.1235" / "0.0". Fields listed in "fixed" are stored so; a field with a NaN or infinity stays
  in floats. (float16 would not help: JSON is text, and 4 decimals are finer than float16 near 1.)
- Boolean masks are 0/1.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import orjson

from model import TranslationTrace, TransformerConfig
from model.core.positional import sinusoidal_positional_encoding
from model.decoding.trace import JSON_DECIMALS

LEAN_FORMAT = "attention-explorer/lean-trace/1"
PE_REF = "pe"
FLOAT_SCALE = 10.0 ** -JSON_DECIMALS
ORJSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def lean_trace_dict(trace: TranslationTrace) -> dict:
    """The trace as lean JSON-ready data (numpy arrays inside; see the module docstring)."""
    data: dict = {"format": LEAN_FORMAT, "float_scale": FLOAT_SCALE, "fixed": []}
    for field in dataclasses.fields(trace):
        value = getattr(trace, field.name)
        if field.name == "positional_encoding":
            value = {"ref": PE_REF, "rows": int(value.shape[0])}
        elif isinstance(value, np.ndarray) and value.dtype.kind == "b":
            value = np.ascontiguousarray(value, dtype=np.uint8)
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
            if np.isfinite(value).all():
                value = np.ascontiguousarray(np.rint(value.astype(np.float64) / FLOAT_SCALE).astype(np.int64))
                data["fixed"].append(field.name)
            else:
                value = np.ascontiguousarray(np.round(value, JSON_DECIMALS).astype(np.float32))
        data[field.name] = value
    return data


def lean_trace_json(trace: TranslationTrace) -> str:
    """The lean trace as JSON text (for a trace file or an API answer)."""
    return orjson.dumps(lean_trace_dict(trace), option=ORJSON_OPTIONS).decode("utf-8")


def positional_encoding_table(config: TransformerConfig) -> np.ndarray:
    """(max_positions, d_model) float32: the table every trace of this checkpoint takes rows from (3.5)."""
    return sinusoidal_positional_encoding(config.max_positions, config.d_model).numpy()


def positional_encoding_json(table: np.ndarray) -> str:
    """The table a lean trace refers to, served once: {"ref": "pe", "rows", "d_model", "table"} (4 decimals)."""
    table = np.asarray(table, dtype=np.float32)
    if table.ndim != 2:
        raise ValueError(f"the positional-encoding table must be (positions, d_model), got shape {table.shape}")
    rounded = np.ascontiguousarray(np.round(table, JSON_DECIMALS))
    return orjson.dumps({"ref": PE_REF, "rows": table.shape[0], "d_model": table.shape[1], "table": rounded},
                        option=ORJSON_OPTIONS).decode("utf-8")


def trace_from_lean(data: str | bytes | dict, positional_encoding: np.ndarray) -> TranslationTrace:
    """Rebuild the full TranslationTrace from lean JSON and the table its "pe" reference names.

    Floats come back within FLOAT_SCALE / 2 of the original; the positional encodings come back
    exactly (rows of `positional_encoding`, a (P_max, d_model) table).
    """
    values = orjson.loads(data) if isinstance(data, (str, bytes)) else dict(data)
    if values.pop("format", None) != LEAN_FORMAT:
        raise ValueError(f"not a lean trace: expected \"format\": {LEAN_FORMAT!r}")
    scale = float(values.pop("float_scale"))
    for name in values.pop("fixed"):
        values[name] = np.asarray(values[name], dtype=np.float64) * scale
    reference = values["positional_encoding"]
    table = np.asarray(positional_encoding, dtype=np.float32)
    if not isinstance(reference, dict) or reference.get("ref") != PE_REF:
        raise ValueError(f"positional_encoding must be a reference {{\"ref\": {PE_REF!r}, \"rows\": P}}")
    if not 0 < int(reference["rows"]) <= table.shape[0]:
        raise ValueError(f"the trace needs {reference['rows']} positional-encoding rows; the table has {table.shape[0]}")
    values["positional_encoding"] = table[: int(reference["rows"])]
    return TranslationTrace.from_dict(values)
