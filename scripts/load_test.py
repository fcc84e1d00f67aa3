"""Load test: many gradio_client users against the app, measured from outside: errors, latency, calls/s, server CPU.

By default it starts `python3 app.py` itself on 127.0.0.1 and a free port (stopped at the end);
--url points it at a running app instead (--server-pid then lets it read that server's CPU use).
The clients run in a separate process from this measuring one, with lean gradio_client settings
(no file downloads, no telemetry, quiet), so the client's own work is reported apart from the
server's. Each client is its own session, as a browser tab would be.

Scenarios:
- burst (default): --clients users start together, each translating --requests sentences in turn.
- lecture: --visitors open the page within --window seconds (evenly spread): GET / and /config
  (the page is "alive" when both answered), then one translation. Stepping through the sentence
  is UI events that the app keeps off its API (api_visibility="private"), so gradio_client
  cannot drive them: a browser test covers those.

    python3 scripts/load_test.py --checkpoint runs/cpu-small/best          # 32 clients x 5 translations
    python3 scripts/load_test.py --scenario lecture --visitors 100 --window 10
    python3 scripts/load_test.py --url http://127.0.0.1:7860/ --server-pid 1234 --clients 8 --requests 2

Exit status 1 when any request failed or returned a wrong trace.
"""

from __future__ import annotations

import argparse
import json
import contextlib
import multiprocessing
import os
import queue
import resource
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file: the repository's packages (scripts.x)
    sys.path.insert(0, str(ROOT))
from scripts.app_process import started_app  # noqa: E402
from scripts.process_cpu import tree_cpu_s  # noqa: E402

START_TIMEOUT_S = 180  # importing torch and gradio on a busy small machine is slow
HTTP_TIMEOUT_S = 600  # a request under heavy load may wait long in the queue: count it, don't drop it
SENTENCES = [  # (text, direction): short and long, both directions
    ("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"),
    ("Zwei Hunde spielen im Schnee.", "de-en"),
    (
        "Eine Frau in einem roten Kleid singt auf einer Bühne, während hinter ihr eine Band spielt "
        "und viele Menschen zuschauen.",
        "de-en",
    ),
    ("A little girl is climbing into a wooden playhouse.", "en-de"),
    ("Two men are playing soccer in the park.", "en-de"),
    ("Where is the train station?", "en-de"),
]


# --------------------------------------------------------------------------- one user (client process)
class User:
    """One session: a lean gradio_client Client and a pooled httpx client for page and file GETs."""

    def __init__(self, url: str, verify: bool) -> None:
        import httpx
        from gradio_client import Client

        self.url, self.verify = url, verify
        self.http = httpx.Client(timeout=HTTP_TIMEOUT_S)
        self.client = Client(
            url,
            verbose=False,
            download_files=False,
            analytics_enabled=False,
            max_workers=2,
            httpx_kwargs={"timeout": HTTP_TIMEOUT_S},
        )

    def translate(self, text: str, direction: str) -> float:
        """One /translate call -> its latency; checking its trace (/translation_trace, when verify) is not timed."""
        start = time.perf_counter()
        translation = self.client.predict(text, direction, api_name="/translate")["translation"]
        elapsed = time.perf_counter() - start
        if self.verify:
            trace = json.loads(self.client.predict(text, direction, api_name="/translation_trace"))
            if (trace["source_text"], trace["direction"], trace["translation"]) != (text, direction, translation):
                raise AssertionError(f"got the trace of {trace['source_text']!r} ({trace['direction']})")
        return elapsed

    def close(self) -> None:
        self.client.close()
        self.http.close()


def open_page(url: str) -> float:
    """GET / and /config as a browser opening the page does -> seconds until both answered."""
    import httpx

    start = time.perf_counter()
    with httpx.Client(timeout=HTTP_TIMEOUT_S) as http:
        for path in ("", "config"):
            http.get(url.rstrip("/") + "/" + path).raise_for_status()
    return time.perf_counter() - start


def burst(url: str, clients: int, requests: int, verify: bool, record) -> None:
    barrier = threading.Barrier(clients)

    def user(index: int) -> None:
        try:
            session = User(url, verify)
        except Exception as error:  # noqa: BLE001 - every failure is counted and reported
            record("error", f"client {index}: connect: {type(error).__name__}: {error}")
            barrier.abort()
            return
        try:
            barrier.wait(timeout=HTTP_TIMEOUT_S)
        except threading.BrokenBarrierError:
            pass
        for number in range(requests):
            try:
                record("latency", session.translate(*SENTENCES[(index + number) % len(SENTENCES)]))
            except Exception as error:  # noqa: BLE001
                record("error", f"client {index} request {number}: {type(error).__name__}: {error}")
        session.close()

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(user, range(clients)))


def lecture(url: str, visitors: int, window_s: float, verify: bool, record) -> None:
    start = time.perf_counter()

    def visitor(index: int) -> None:
        time.sleep(max(0.0, start + index * window_s / visitors - time.perf_counter()))
        try:
            record("page", open_page(url))
            session = User(url, verify)
            record("latency", session.translate(*SENTENCES[index % len(SENTENCES)]))
            session.close()
        except Exception as error:  # noqa: BLE001
            record("error", f"visitor {index}: {type(error).__name__}: {error}")

    with ThreadPoolExecutor(visitors) as pool:
        list(pool.map(visitor, range(visitors)))


def client_process(url: str, scenario: str, options: dict, results) -> None:
    """Runs in its own process: every user of the scenario as a thread; sends back what it measured."""
    measured: dict[str, list] = {"latency": [], "page": [], "error": []}
    lock = threading.Lock()

    def record(kind: str, value) -> None:
        with lock:
            measured[kind].append(value)

    import gradio_client  # noqa: F401 - imported before measuring: the clients' CPU is their work only
    import httpx  # noqa: F401

    cpu_start, start = cpu_s(), time.perf_counter()
    if scenario == "burst":
        burst(url, options["clients"], options["requests"], options["verify"], record)
    else:
        lecture(url, options["visitors"], options["window"], options["verify"], record)
    results.put({**measured, "wall_s": time.perf_counter() - start, "client_cpu_s": cpu_s() - cpu_start})


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# --------------------------------------------------------------------------- measuring parent
def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def machine() -> dict:
    """The CPU model ("model name" of /proc/cpuinfo), core count and load average: recorded with every figure."""
    lines = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    cpu = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "unknown")
    return {"cpu": cpu, "cpu_count": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}


def run_load(url: str, scenario: str, options: dict, server_pid: int | None = None) -> dict:
    """Run the scenario's clients in a child process; measure the server's CPU around it -> the summary."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing of this process is shared
    results = context.Queue()
    before = machine()
    cpu_before = tree_cpu_s(server_pid) if server_pid else None
    child = context.Process(target=client_process, args=(url, scenario, options, results), daemon=True)
    child.start()
    while True:  # get before join: a child cannot exit while its queue is unflushed
        try:
            measured = results.get(timeout=1)
            break
        except queue.Empty:
            if not child.is_alive():
                raise RuntimeError(f"the client process exited ({child.exitcode}) without a result") from None
    child.join()
    cpu_s = tree_cpu_s(server_pid) - cpu_before if server_pid else None
    wall, latencies = measured["wall_s"], measured["latency"]
    expected = options["clients"] * options["requests"] if scenario == "burst" else options["visitors"]
    return {
        "scenario": scenario,
        "requests": expected,
        "ok": len(latencies),
        "errors": measured["error"],
        "p50_s": percentile(latencies, 50),
        "p95_s": percentile(latencies, 95),
        "max_s": max(latencies, default=float("nan")),
        "wall_s": wall,
        "throughput_per_s": len(latencies) / wall,
        "page_p50_s": percentile(measured["page"], 50),
        "page_p95_s": percentile(measured["page"], 95),
        "server_cpu_s": cpu_s,
        "server_cores": None if cpu_s is None else cpu_s / wall,
        "client_cpu_s": measured["client_cpu_s"],
        "client_cores": measured["client_cpu_s"] / wall,
        **{key: options[key] for key in (("clients",) if scenario == "burst" else ("visitors", "window"))},
        "machine": {**before, "load_average_end": machine()["load_average"]},
    }


def report(result: dict) -> str:
    lines = [f"  error: {error}" for error in result["errors"][:10]]
    lines.append(
        f"{result['ok']}/{result['requests']} ok, {len(result['errors'])} errors; latency p50 "
        f"{result['p50_s']:.2f}s, p95 {result['p95_s']:.2f}s, max {result['max_s']:.2f}s; "
        f"{result['throughput_per_s']:.1f} translations/s over {result['wall_s']:.1f}s"
    )
    if result["scenario"] == "lecture":
        lines.append(
            f"page alive (GET / and /config): p50 {result['page_p50_s']:.2f}s, p95 {result['page_p95_s']:.2f}s"
        )
    server = (
        "not measured (give --server-pid)"
        if result["server_cpu_s"] is None
        else f"{result['server_cpu_s']:.1f} CPU s = {result['server_cores']:.2f} cores"
    )
    lines.append(
        f"server: {server}; clients: {result['client_cpu_s']:.1f} CPU s = {result['client_cores']:.2f} "
        f"cores (of {os.cpu_count()})"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help="a running app (default: start app.py on 127.0.0.1 and a free port)")
    where.add_argument("--checkpoint", help="checkpoint for the app this script starts (default: app.py's)")
    parser.add_argument("--server-pid", type=int, help="with --url: the server's process id, to measure its CPU")
    parser.add_argument(
        "--scenario",
        choices=("burst", "lecture"),
        default="burst",
        help="burst: --clients x --requests at once (default); lecture: --visitors within --window",
    )
    parser.add_argument("--clients", type=int, default=32, help="burst: concurrent users (default 32)")
    parser.add_argument("--requests", type=int, default=5, help="burst: translations per user (default 5)")
    parser.add_argument("--visitors", type=int, default=100, help="lecture: visitors (default 100)")
    parser.add_argument(
        "--window", type=float, default=10.0, help="lecture: seconds over which they arrive (default 10)"
    )
    parser.add_argument(
        "--no-verify",
        dest="verify",
        action="store_false",
        help="do not fetch each trace file to check it is the sentence asked for",
    )
    args = parser.parse_args(argv)
    if min(args.clients, args.requests, args.visitors) < 1 or args.window < 0:
        parser.error("--clients, --requests and --visitors must be at least 1, --window not negative")
    if args.server_pid and not args.url:
        parser.error("--server-pid goes with --url (the server this script starts is measured anyway)")
    options = {key: getattr(args, key) for key in ("clients", "requests", "visitors", "window", "verify")}

    with tempfile.TemporaryDirectory(prefix="load-test-") as folder, contextlib.ExitStack() as stack:
        server_pid = args.server_pid
        if args.url:
            url = args.url
        else:
            url, process = stack.enter_context(started_app(args.checkpoint, Path(folder) / "app.log", START_TIMEOUT_S))
            server_pid = process.pid
        what = (
            f"{args.clients} clients x {args.requests} translations"
            if args.scenario == "burst"
            else f"{args.visitors} visitors within {args.window:g} s"
        )
        print(f"{what} against {url}", flush=True)
        result = run_load(url, args.scenario, options, server_pid)
    print(report(result))
    return result


if __name__ == "__main__":
    sys.exit(1 if main()["errors"] else 0)
