"""Arrays as the lesson page holds them: Plotly's packed binary form, {"dtype", "shape", "bdata"}.

The bytes of a float32 array written as base64 are the trace's own numbers, bit for bit, in 4/3 of their size;
Plotly decodes the form itself where it meets it in a figure, and the page's player decodes the attention
arrays it slices per step (lesson/player.js, `unpack`). Shape "R,C" is row-major, as Plotly reads it.
"""

from __future__ import annotations

import base64

import numpy as np

DTYPES = {np.dtype(np.float32): "f4", np.dtype(np.float64): "f8", np.dtype(np.int32): "i4", np.dtype(np.uint8): "u1"}


def packed(array: np.ndarray) -> dict:
    """{"dtype", "shape", "bdata"} of a numeric array: float64 and integers become float32 and int32, booleans
    0/1 bytes; shape as "d0,d1,..."."""
    value = np.asarray(array)
    if value.dtype.kind == "b":
        value = value.astype(np.uint8)
    elif value.dtype.kind in "iu" and value.dtype != np.uint8:
        value = value.astype(np.int32)
    elif value.dtype.kind == "f" and value.dtype != np.float32:
        value = value.astype(np.float32)
    value = np.ascontiguousarray(value)
    encoded = base64.b64encode(value.tobytes()).decode("ascii")
    return {"dtype": DTYPES[value.dtype], "shape": ",".join(str(n) for n in value.shape), "bdata": encoded}


def unpacked(data: dict) -> np.ndarray:
    """The array of a `packed` dict (tests read the page's numbers back with it)."""
    dtype = {code: dtype for dtype, code in DTYPES.items()}[data["dtype"]]
    shape = tuple(int(n) for n in str(data["shape"]).split(",") if n != "")
    return np.frombuffer(base64.b64decode(data["bdata"]), dtype=dtype).reshape(shape)
