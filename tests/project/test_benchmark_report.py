"""benchmarks/report.py: each part the results hold is printed as its table, values under their headers, parts that
were skipped say why, and a missed target says MISSED."""

from __future__ import annotations

from benchmarks.report import print_results, table


def test_a_table_aligns_values_under_their_headers():
    lines = table(["name", "ms"], [["views", 12.5], ["model", 3]]).splitlines()
    assert lines == ["name     ms", "-----  ----", "views  12.5", "model     3"]


def test_the_results_print_part_by_part(capsys):
    results = {
        "machine": {"torch_threads": 2},
        "views": {
            "rows": [
                {
                    "view": "heatmap",
                    "source_tokens": 20,
                    "steps": 9,
                    "ms": {"median": 4.2, "p95": 6.0},
                    "cpu_ms": {"median": 4.0},
                }
            ]
        },  # fmt: skip
        "memory": {"skipped": "no gradio_client"},
        "gpu": {
            "tokens_per_s": 9000,
            "device": "cuda",
            "parameters": 7577600,
            "batch": 32,
            "src_len": 40,
            "compile": True,
            "step_ms": 11.0,
            "model_tflops_per_s": 90.0,
            "peak_tflops": 989,
            "mfu": 0.0914,
        },  # fmt: skip
        "targets": [
            {"target": "re-render", "value": 4.2, "limit": 30.0, "unit": "ms", "met": True},
            {"target": "p95", "value": 4.0, "limit": 3.0, "unit": "s", "met": False},
        ],  # fmt: skip
    }
    print_results(results)
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line.startswith("## ")]
    assert headings == [
        "## views: server-side re-render from a kept trace (app callbacks), ms",
        "## memory: skipped: no gradio_client",
        "## gpu: training on cuda (7,577,600 parameters)",
        "## targets (medians)",
    ]
    lines = out.splitlines()
    views = lines[lines.index(headings[0]) + 1 : lines.index(headings[0]) + 4]
    assert views[0].split() == ["view", "tokens", "steps", "median", "p95", "cpu", "median"]
    assert views[2].split() == ["heatmap", "20", "9", "4.2", "6.0", "4.0"]
    assert "9.1%" in out and out.rstrip().endswith("MISSED") and " met" in out
