"""The layout check's tally (scripts/layout_tally.py) sums what a run's screens recorded."""

from __future__ import annotations

import json

from scripts.layout_tally import main, tally


def test_the_tally_sums_screens_figures_and_problems(tmp_path, capsys):
    record = tmp_path / "screens.jsonl"
    lines = [
        {"screen": "390x844-dark-first-screen", "figures": 1, "problems": 0},
        {"screen": "390x844-dark-explain-branch", "figures": 0, "problems": 2},
        {"screen": "1280x720-light-masks", "figures": 3, "problems": 0},
    ]
    record.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert tally(record) == {
        "screens": 3,
        "figures": 4,
        "problems": 2,
        "sizes": {"390x844-dark": 2, "1280x720-light": 1},
    }
    assert main([str(record)]) == 0 and '"figures": 4' in capsys.readouterr().out
    assert main([str(tmp_path / "none.jsonl")]) == 1
