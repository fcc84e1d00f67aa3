"""Reading a lines figure (visualizer/lines.py) back from its JSON, as the browser receives it: which query and
key each line joins (from its geometry and the token columns: the token rows nearest its ends, several heads being
fanned out around each token), its head (from its name) and its weight."""

from __future__ import annotations

import numpy as np

from visualizer.line_styles import MIN_OPACITY, OPACITY_LEVELS
from visualizer.lines import LINE_THRESHOLD


def column(fig: dict, side: str) -> tuple[float, dict[float, int]]:
    """(x of a token column, {y: position in the sentence}) read from its markers."""
    (series,) = [s for s in fig["data"] if s.get("name") == {"query": "queries", "key": "keys"}[side]]
    xs = set(np.asarray(series["x"], dtype=float).tolist())
    assert len(xs) == 1
    return xs.pop(), dict(zip(np.asarray(series["y"], dtype=float).tolist(), np.asarray(series["customdata"]).tolist()))


def head_of(series: dict) -> int:
    """0-based head of a series from its name "head h" (what the legend and the hover say)."""
    assert series["name"].startswith("head "), series["name"]
    return int(series["name"].split()[1]) - 1


def drawn_lines(fig: dict) -> dict[tuple[int, int, int], float]:
    """{(head, query position, key position): weight} of every line, read from the figure's geometry: a line's
    end at the query column names its query, its end at the key column its key."""
    query_x, query_at = column(fig, "query")
    key_x, key_at = column(fig, "key")
    lines = {}
    for series in fig["data"]:
        if series.get("mode") != "lines" or series["x"][0] is None:
            continue  # the legend entries are empty series
        head = head_of(series)
        x, y = np.asarray(series["x"], dtype=float).reshape(-1, 4), np.asarray(series["y"], dtype=float).reshape(-1, 4)
        data = np.asarray(series["customdata"]).reshape(-1, 4, 3)
        assert np.all(x[:, 0] == query_x) and np.all(x[:, 2] == key_x) and np.isnan(x[:, 3]).all()
        for (y_query, _, y_key, _), rows in zip(y, data):
            # several heads are fanned out around each token: both ends moved by the same share of a row
            shift = y_query - round(y_query)
            assert abs(shift) < 0.4 and abs((y_key - round(y_key)) - shift) < 1e-9
            query, key = query_at[float(round(y_query))], key_at[float(round(y_key))]
            assert (rows[:, 0] == query).all() and (rows[:, 1] == key).all()  # the hover names the same pair
            assert (head, query, key) not in lines
            lines[head, query, key] = float(rows[0, 2])
            # as opaque as its weight rounded up to a tenth, from MIN_OPACITY (the threshold) to 1 (a weight of 1)
            level = (series["opacity"] - MIN_OPACITY) / (1 - MIN_OPACITY)
            assert rows[0, 2] <= level + 0.006 < rows[0, 2] + 1 / OPACITY_LEVELS + 0.006
    return lines


def strongest_per_query(weights, n_queries: int, n_keys: int) -> set[tuple[int, int, int]]:
    """(head, query, key) of each head's strongest key per query (the first of equal ones), where it reaches the
    threshold: the lines a figure of several heads draws, counted with plain loops."""
    lines = set()
    for h in range(weights.shape[0]):
        for q in range(n_queries):
            best = 0
            for k in range(1, n_keys):
                if weights[h, q, k] > weights[h, q, best]:
                    best = k
            if weights[h, q, best] >= LINE_THRESHOLD:
                lines.add((h, q, best))
    return lines
