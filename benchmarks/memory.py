"""Memory part: RSS of the app process (and of all its processes: the model workers) before and after
N translations through gradio_client.

app.py runs in a subprocess on the checkpoint; one gradio_client session sends N translations
(sources of 5..80 tokens, both directions, round-robin). VmHWM in /proc/<pid>/status is the
process's peak RSS; VmRSS what it holds at the end.
"""

from __future__ import annotations

import tempfile
import time

from .common import SOURCE_LANGUAGE, app_server, read_memory_kib, summarize, text_of_tokens
from scripts.process_cpu import descendants
from .model_speed import DIRECTIONS, LENGTHS


def tree_rss_mib(pid: int) -> dict:
    """VmRSS of the server and each descendant (the model workers), and their sum, in MiB."""
    members = {member: read_memory_kib(member)["VmRSS"] / 1024 for member in [pid, *descendants(pid)]}
    return {
        "server_mib": round(members[pid], 1),
        "workers_mib": [round(v, 1) for m, v in members.items() if m != pid],
        "total_mib": round(sum(members.values()), 1),
    }


def to_mib(kib: int) -> float:
    return round(kib / 1024, 1)


def measure(checkpoint, checkpoint_dir: str, translations: int = 100) -> dict:
    from gradio_client import Client

    sources = [(text_of_tokens(checkpoint.tokenizer, SOURCE_LANGUAGE[d], n), d) for d in DIRECTIONS for n in LENGTHS]
    with app_server(checkpoint_dir) as (url, pid), tempfile.TemporaryDirectory() as downloads:
        at_start = read_memory_kib(pid)
        client = Client(url, verbose=False, download_files=downloads, analytics_enabled=False)
        latencies = []
        for index in range(translations):
            text, direction = sources[index % len(sources)]
            start = time.perf_counter()
            client.predict(text, direction, api_name="/translate")
            latencies.append((time.perf_counter() - start) * 1000)
        at_end = read_memory_kib(pid)
        every_process = tree_rss_mib(pid)  # the server and its model workers
    return {
        "all_processes_end_mib": every_process,
        "translations": translations,
        "rss_start_mib": to_mib(at_start["VmRSS"]),
        "rss_end_mib": to_mib(at_end["VmRSS"]),
        "peak_rss_mib": to_mib(at_end["VmHWM"]),
        "api_round_trip_ms": summarize(latencies),
    }
