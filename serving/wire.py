"""The lean trace JSON: what a client downloads per translation, every weight in fewer characters.

The full `TranslationTrace.to_json()` writes every weight as a decimal float. The lean form differs
in two ways, and `trace_from_lean` undoes both:

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

from model import TranslationTrace
from model.decoding.trace import JSON_DECIMALS

LEAN_FORMAT = "attention-explorer/lean-trace/3"  # the trace without the PE table, a padded batch or the logit lens
FLOAT_SCALE = 10.0**-JSON_DECIMALS
ORJSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def lean_trace_dict(trace: TranslationTrace) -> dict:
    """The trace as lean JSON-ready data (numpy arrays inside; see the module docstring)."""
    data: dict = {"format": LEAN_FORMAT, "float_scale": FLOAT_SCALE, "fixed": []}
    for field in dataclasses.fields(trace):
        value = getattr(trace, field.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "b":
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


def positional_encoding_json(table: np.ndarray) -> str:
    """The table as the /positional_encoding endpoint serves it: {"rows", "d_model", "table"} (4 decimals)."""
    table = np.asarray(table, dtype=np.float32)
    if table.ndim != 2:
        raise ValueError(f"the positional-encoding table must be (positions, d_model), got shape {table.shape}")
    rounded = np.ascontiguousarray(np.round(table, JSON_DECIMALS))
    return orjson.dumps(
        {"rows": table.shape[0], "d_model": table.shape[1], "table": rounded}, option=ORJSON_OPTIONS
    ).decode("utf-8")


def trace_from_lean(data: str | bytes | dict) -> TranslationTrace:
    """Rebuild the full TranslationTrace from lean JSON; floats come back within FLOAT_SCALE / 2 of the original."""
    values = orjson.loads(data) if isinstance(data, (str, bytes)) else dict(data)
    if values.pop("format", None) != LEAN_FORMAT:
        raise ValueError(f'not a lean trace: expected "format": {LEAN_FORMAT!r}')
    scale = float(values.pop("float_scale"))
    for name in values.pop("fixed"):
        values[name] = np.asarray(values[name], dtype=np.float64) * scale
    return TranslationTrace.from_dict(values)
