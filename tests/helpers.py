"""Small helpers that several test modules use (fixtures are in conftest.py): a gr.Plot value's figure JSON,
a figure's (possibly typed) array, and the exact equality of two traces."""

from __future__ import annotations

import base64
import dataclasses
import json

import numpy as np


def figure_json(value) -> dict:
    """A gr.Plot value (PlotData) -> its Plotly figure as JSON."""
    assert value.type == "plotly"
    return json.loads(value.plot)


def array(field) -> np.ndarray:
    """A figure JSON array: a plain list, or Plotly's typed array {"dtype", "bdata" (base64), "shape"}."""
    if not isinstance(field, dict):
        return np.asarray(field)
    values = np.frombuffer(base64.b64decode(field["bdata"]), dtype=np.dtype(field["dtype"]))
    shape = field.get("shape")
    return values.reshape([int(n) for n in str(shape).split(",")]) if shape else values


def assert_same_trace(a, b) -> None:
    """Every field of two traces equal: the same arrays (dtype and values), not close ones."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), field.name
        else:
            assert x == y, field.name
