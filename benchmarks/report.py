"""The benchmarks' results as text: one table per part (`python -m benchmarks.run` prints them), then the targets."""

from __future__ import annotations

from collections.abc import Callable


def table(headers: list[str], rows: list[list]) -> str:
    """Aligned columns: the first left-aligned, the others right-aligned, a rule under the headers."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def model_part(results: dict) -> list[str]:
    part = results.get("model", {})
    if "rows" not in part:
        return []
    columns = {  # header: the row's value
        "direction": lambda r: r["direction"],
        "tokens": lambda r: r["source_tokens"],
        "steps": lambda r: r["output_steps"],
        "traced med": lambda r: r["traced_ms"]["median"],
        "traced p95": lambda r: r["traced_ms"]["p95"],
        "traced cpu": lambda r: r["traced_cpu_ms"]["median"],
        "per step": lambda r: r["traced_ms_per_step"],
        "plain med": lambda r: r["plain_ms"]["median"],
        "no-cache med": lambda r: r["no_cache_ms"]["median"],
        "plain/traced": lambda r: r["plain_ratio"],
        "no-cache/traced": lambda r: r["no_cache_ratio"],
        "traced/plain": lambda r: r["trace_overhead"],
    }
    rows = [[value(r) for value in columns.values()] for r in part["rows"]]
    heading = f"\n## model (CPU, {results['machine']['torch_threads']} torch threads), ms"
    return [heading, table(list(columns), rows)]


def views_part(results: dict) -> list[str]:
    part = results.get("views", {})
    if "rows" not in part:
        return []
    rows = [
        [r["view"], r["source_tokens"], r["steps"], r["ms"]["median"], r["ms"]["p95"], r["cpu_ms"]["median"]]
        for r in part["rows"]
    ]
    return [
        "\n## views: server-side re-render from a kept trace (app callbacks), ms",
        table(["view", "tokens", "steps", "median", "p95", "cpu median"], rows),
    ]


def browser_part(results: dict) -> list[str]:
    part = results.get("browser", {})
    if "translate_ms" not in part:
        return []
    rows = []
    for name, key in (("Translate -> attention plot", "translate_ms"), ("Next step -> attention plot", "step_ms")):
        stats = part[key]
        optional = [stats[key]["median"] if stats[key] else "-" for key in ("afterplot", "plotly_react")]
        rows.append([name, stats["drawn"]["median"], stats["drawn"]["p95"], stats["painted"]["median"], *optional])
    return [
        f"\n## browser (headless Chromium, {part['source_tokens']}-token source), ms after the click",
        table(["click", "drawn med", "drawn p95", "painted med", "afterplot med", "in Plotly.react med"], rows),
    ]


def serving_part(results: dict) -> list[str]:
    part = results.get("serving", {})
    if "single_call" not in part:
        return []
    call = part["single_call"]
    traced = call.get("api_trace_ms", {}).get("median", "-")
    heading = (
        f"\n## serving: one /translate call {call['api_ms']['median']} ms median (bare model "
        f"{call['bare_model_ms']['median']} ms = {call['model_share']:.0%}; with the trace, /translation_trace "
        f"{traced} ms); RSS of all processes "
        f"{part['rss']['total_mib']} MiB"
    )
    rows = [
        [
            name,
            r["ok"],
            len(r["errors"]),
            round(r["p50_s"], 2),
            round(r["p95_s"], 2),
            round(r["throughput_per_s"], 2),
            round(r["page_p95_s"], 2) if r["scenario"] == "lecture" else "-",
            round(r["server_cores"], 2),
            r["machine"]["load_average"][0],
        ]
        for name, r in (("burst", part["burst"]), ("lecture", part["lecture"]))
    ]
    headers = ["run", "ok", "errors", "p50 s", "p95 s", "calls/s", "page p95 s", "server cores", "load avg"]
    return [heading, table(headers, rows)]


def skipped_parts(results: dict) -> list[str]:
    return [
        f"\n## {name}: skipped: {results[name]['skipped']}"
        for name in ("browser", "memory", "gpu")
        if "skipped" in results.get(name, {})
    ]


def memory_part(results: dict) -> list[str]:
    part = results.get("memory", {})
    if "peak_rss_mib" not in part:
        return []
    row = [part["rss_start_mib"], part["rss_end_mib"], part["peak_rss_mib"], part["api_round_trip_ms"]["median"]]
    return [
        f"\n## memory: app.py after {part['translations']} translations (gradio_client), MiB",
        table(["RSS at start", "RSS at end", "peak RSS (VmHWM)", "API round trip med ms"], [row]),
    ]


def gpu_part(results: dict) -> list[str]:
    part = results.get("gpu", {})
    if "tokens_per_s" not in part:
        return []
    names = ["batch", "src_len", "compile", "step_ms", "tokens_per_s", "model_tflops_per_s", "peak_tflops"]
    row = [*(part[name] for name in names), f"{part['mfu']:.1%}"]
    return [
        f"\n## gpu: training on {part['device']} ({part['parameters']:,} parameters)",
        table(["batch", "len", "compile", "step ms", "tokens/s", "model TFLOP/s", "peak TFLOP/s", "MFU"], [row]),
    ]


def opus_mt_part(results: dict) -> list[str]:
    part = results.get("opus-mt", {})
    if "rows" not in part:
        return []
    names = ("translate", "trace_file", "first_figure")
    rows = [
        [
            r["threads"],
            "app default" if r["budget"] is None else r["budget"],
            r["output_steps"],
            r["ms"]["total"]["median"],
            r["ms"]["total"]["p95"],
            *(r["ms"][name]["median"] for name in names),
            r["cpu_ms"]["median"],
        ]
        for r in part["rows"]
    ]
    headers = ["threads", "budget", "steps", "total med", "total p95", "translate", "trace file", "figure", "cpu"]
    readings = [[stage, v["rss_mib"], v["peak_mib"]] for stage, v in part["memory"]["readings"].items()]
    return [
        f"\n## opus-mt: {part['folder']}, {part['parameters']:,} parameters, loaded in {part['load_s']} s; "
        "Translate -> trace -> first figure (server-side), ms",
        table(headers, rows),
        "\nmemory of the app's process with both models (MiB)",
        table(["stage", "RSS", "peak so far"], readings),
    ]


def targets_part(results: dict) -> list[str]:
    if not results.get("targets"):
        return []
    rows = [
        [t["target"], t["value"], t["limit"], t["unit"], "met" if t["met"] else "MISSED"] for t in results["targets"]
    ]
    return ["\n## targets (medians)", table(["target", "value", "limit", "unit", ""], rows)]


PARTS: tuple[Callable[[dict], list[str]], ...] = (
    model_part,
    views_part,
    browser_part,
    serving_part,
    skipped_parts,
    memory_part,
    gpu_part,
    opus_mt_part,
    targets_part,
)


def print_results(results: dict) -> None:
    """Every part's table that `results` holds, in the order above."""
    for part in PARTS:
        for block in part(results):
            print(block)
