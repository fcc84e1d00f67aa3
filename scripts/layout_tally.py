"""What the browser tests' layout check looked at in a run: its screens, their figures and the problems it found,
summed from the tally it writes beside its screenshots (tests/support/layout_check.py, test-artifacts/screens/).

    python3 -m scripts.layout_tally                      # the last run's tally in test-artifacts/screens/
    python3 -m scripts.layout_tally path/to/screens.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

TALLY = Path(__file__).resolve().parents[1] / "test-artifacts" / "screens" / "screens.jsonl"


def tally(path: Path) -> dict:
    """{"screens", "figures", "problems", "sizes": {size and theme: screens}} of one run's tally."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {
        "screens": len(lines),
        "figures": sum(line["figures"] for line in lines),
        "problems": sum(line["problems"] for line in lines),
        "sizes": dict(Counter("-".join(line["screen"].split("-")[:2]) for line in lines)),
    }


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else TALLY
    if not path.exists():
        print(f"no tally at {path}: run the layout check first (tests/browser/test_browser_layout.py)")
        return 1
    print(json.dumps(tally(path), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
