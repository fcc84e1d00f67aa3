"""A lesson's first figure: an exported lesson folder (scripts/export_lesson.py) opened from file:// in headless
Chromium at 1280x720, every request outside the folder refused, the time from the navigation's start to its first
figure drawn (lesson/player.js writes it in <body data-first-figure-ms>), over several openings; and the folder's size.

    python3 -m scripts.export_lesson --out /tmp/lesson5 "Ein Mann ..." ...   # the lesson to time
    python3 -m benchmarks.lesson_speed /tmp/lesson5 --opens 9
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from scripts.chromium import launch

from .common import machine_info


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def first_figures(folder: Path, opens: int) -> list[int]:
    """ms from navigation to the first figure, one per opening (each in a fresh browser context: nothing cached)."""
    from playwright.sync_api import sync_playwright

    url = (folder / "index.html").resolve().as_uri()
    times = []
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for _ in range(opens):
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.route(
                "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
            )
            page = context.new_page()
            page.goto(url)
            page.wait_for_function("() => !!document.body.dataset.firstFigureMs")
            times.append(int(page.evaluate("() => Number(document.body.dataset.firstFigureMs)")))
            context.close()
        browser.close()
    return times


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="an exported lesson folder")
    parser.add_argument("--opens", type=int, default=9, help="openings (median reported)")
    args = parser.parse_args(argv)
    times = first_figures(args.folder, args.opens)
    result = {
        "machine": machine_info(threads=1),
        "folder_mb": round(folder_bytes(args.folder) / 1e6, 2),
        "first_figure_ms": {"median": statistics.median(times), "min": min(times), "max": max(times), "n": len(times)},
        "samples_ms": times,
    }
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
