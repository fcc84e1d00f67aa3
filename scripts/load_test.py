"""Load test: many gradio_client users translating at once against the app; reports errors and latency.

By default it starts `python3 app.py` itself on 127.0.0.1 and a free port (stopped at the end);
--url points it at a running app instead. Each client is its own session, as a browser tab would be.

    python3 scripts/load_test.py --checkpoint runs/cpu-small/best          # 32 clients x 5 translations
    python3 scripts/load_test.py --url http://127.0.0.1:7860/ --clients 8 --requests 2

Exit status 1 when any request failed or returned a wrong trace.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from app_process import started_app  # noqa: E402
START_TIMEOUT_S = 180  # importing torch and gradio on a busy small machine is slow
SENTENCES = [  # (text, direction): short and long, both directions
    ("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"),
    ("Zwei Hunde spielen im Schnee.", "de-en"),
    ("Eine Frau in einem roten Kleid singt auf einer Bühne, während hinter ihr eine Band spielt "
     "und viele Menschen zuschauen.", "de-en"),
    ("A little girl is climbing into a wooden playhouse.", "en-de"),
    ("Two men are playing soccer in the park.", "en-de"),
    ("Where is the train station?", "en-de"),
]


def run_load(url: str, clients: int, requests: int, downloads: Path) -> dict:
    """`clients` sessions, started together, each translating `requests` sentences in turn.

    A request counts as an error when it raises or when its trace is not the one asked for
    (another sentence or direction would mean that users' data crossed over).
    """
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients)

    def user(index: int) -> None:
        try:
            client = Client(url, verbose=False, download_files=str(downloads / f"client-{index}"),
                            analytics_enabled=False)
        except Exception as error:  # noqa: BLE001 - every failure is counted and reported
            with lock:
                errors.append(f"client {index}: connect: {type(error).__name__}: {error}")
            barrier.abort()
            return
        try:
            barrier.wait(timeout=300)
        except threading.BrokenBarrierError:
            pass
        for number in range(requests):
            text, direction = SENTENCES[(index + number) % len(SENTENCES)]
            start = time.perf_counter()
            try:
                translation, path = client.predict(text, direction, api_name="/translate")
                trace = json.loads(Path(path).read_text(encoding="utf-8"))
                if (trace["source_text"], trace["direction"], trace["translation"]) != (text, direction, translation):
                    raise AssertionError(f"got the trace of {trace['source_text']!r} ({trace['direction']})")
            except Exception as error:  # noqa: BLE001
                with lock:
                    errors.append(f"client {index} request {number}: {type(error).__name__}: {error}")
                continue
            with lock:
                latencies.append(time.perf_counter() - start)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(user, range(clients)))
    wall = time.perf_counter() - start
    seconds = np.array(latencies) if latencies else np.array([np.nan])
    return {
        "clients": clients, "requests": clients * requests, "ok": len(latencies), "errors": errors,
        "p50_s": float(np.percentile(seconds, 50)), "p95_s": float(np.percentile(seconds, 95)),
        "max_s": float(np.max(seconds)), "wall_s": wall, "throughput_per_s": len(latencies) / wall,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running app (default: start app.py on 127.0.0.1 and a free port)")
    where.add_argument("--checkpoint", help="checkpoint for the app this script starts (default: app.py's)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent users (default 32)")
    parser.add_argument("--requests", type=int, default=5, help="translations per user (default 5)")
    args = parser.parse_args(argv)
    if args.clients < 1 or args.requests < 1:
        parser.error("--clients and --requests must be at least 1")

    with tempfile.TemporaryDirectory(prefix="load-test-") as folder:
        folder = Path(folder)
        with contextlib.ExitStack() as stack:
            url = args.url or stack.enter_context(started_app(args.checkpoint, folder / "app.log"))[0]
            print(f"{args.clients} clients x {args.requests} translations against {url}", flush=True)
            result = run_load(url, args.clients, args.requests, folder)
    for error in result["errors"][:10]:
        print("  error:", error)
    print(f"{result['ok']}/{result['requests']} ok, {len(result['errors'])} errors; latency p50 "
          f"{result['p50_s']:.2f}s, p95 {result['p95_s']:.2f}s, max {result['max_s']:.2f}s; "
          f"{result['throughput_per_s']:.1f} translations/s over {result['wall_s']:.1f}s")
    return result


if __name__ == "__main__":
    sys.exit(1 if main()["errors"] else 0)
