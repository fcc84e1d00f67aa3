"""Planted-fault mutation check: does the fast test suite catch a wrong picture?

Each fault below is one exact text replacement in one file. For every fault the script copies the
repository to a temporary directory (the working tree is never touched), plants the fault, runs a
pytest selection with -x and a time limit, and reports it as
  caught    the tests failed (or errored) with the fault planted,
  timeout   the run exceeded --timeout (counted as caught: the suite would not pass),
  SURVIVED  every selected test passed with the fault planted,
  stale     the snippet is not in the file (or not exactly once): re-anchor it, it was not run.
The score is caught / (caught + survived); stale faults are listed, never silently skipped.

    python3 scripts/mutation_check.py --stale              # seconds: is every snippet still in its file?
    python3 scripts/mutation_check.py --list               # the faults
    python3 scripts/mutation_check.py --suite new          # provenance + view tests; ~1 min a fault
    python3 scripts/mutation_check.py --suite views --only view-,pipeline-,heatmap-
    python3 scripts/mutation_check.py --suite old          # only the model tests
    python3 scripts/mutation_check.py --tests tests/model/decoding/test_beam.py --only beam-
    python3 scripts/mutation_check.py --browser --tests tests/browser/test_browser_phone_figures.py --only phone-
    python3 scripts/mutation_check.py                      # default: all of them (slow: run --only subsets
                                                           # in parallel processes on a small machine)

Run --stale after any refactor of model/, ui/ or visualizer/ and re-anchor what it lists (a stale
fault tests nothing); add a fault with every new view or model module, and a test for every survivor
that is not an equivalent mutant.

To add a fault, append a Fault(name, file, old, new, description) to MODEL_FAULTS in scripts/mutation_faults.py
(the model), to OPUS_MT_FAULTS in scripts/mutation_faults_opus_mt.py (decoding and scoring an OPUS-MT checkpoint),
to VIEW_FAULTS in scripts/mutation_faults_views.py (the views and what they draw), to CORPUS_FAULTS in
scripts/mutation_faults_corpus.py (the corpus panels: head roles, pruning, query-key map, attribution), to SCREEN_FAULTS in
scripts/mutation_faults_screen.py (the screen after Translate and its phone figures, Compare's sentence, lines and
grid), to HOUSE_FAULTS in scripts/mutation_faults_house.py (the panel list, the repository's own checks,
shipping) or to LESSON_FAULTS in scripts/mutation_faults_lesson.py (a lesson's page): `old` must occur exactly once in `file`; a fault caught by a browser test runs with --browser.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OLD_MODEL_TESTS = [
    "tests/model/core/test_equivalence_with_torch.py",
    "tests/model/core/test_invariants.py",
    "tests/model/decoding/test_beam.py",
    "tests/model/analysis/test_readouts.py",
    "tests/model/training/test_train.py",
    "tests/model/training/test_learning.py",
    "tests/model/training/test_average.py",
    "tests/model/text/test_marian_tokenizer.py",
    "tests/model/checkpoints/test_marian_provenance.py",
    "tests/model/decoding/test_beam_marian.py",
    "tests/project/test_score_checkpoint.py",
    "tests/project/test_benchmarks.py::test_opus_mt_folder_has_the_published_fields_and_never_ends",
]
PROVENANCE_TESTS = [
    "tests/model/decoding/test_trace_provenance.py",
    "tests/model/analysis/test_logit_lens.py",
    "tests/model/decoding/test_greedy_choice.py",
    "tests/model/decoding/test_ablation.py",
    "tests/model/decoding/test_cache_and_forced_prefix.py",
    "tests/model/decoding/test_beam_provenance.py",
    "tests/model/training/test_training_math.py",
    "tests/model/decoding/test_finished_sentence.py",
]  # fastest to fail first
VIEW_TESTS = [
    "tests/ui/test_view_provenance_attention.py",
    "tests/ui/test_view_provenance_panels.py",
    "tests/ui/explain/test_lens_panel.py",
    "tests/model/analysis/test_rollout.py",
    "tests/model/analysis/test_step_changes.py",
    "tests/model/analysis/test_kv_cache.py",
    "tests/model/training/test_film.py",
    "tests/ui/test_start_share_tour.py",
    "tests/model/training/test_flops.py",
    "tests/visualizer/test_visualizer_attention.py",
    "tests/ui/explain/test_corpus_views.py",
    "tests/visualizer/test_visualizer_fit.py",
    "tests/visualizer/test_visualizer_masks_positions.py",
    "tests/ui/test_opus_mt_page.py",
    "tests/ui/explain/test_explain_views.py",
]  # the views, the page's redraw and the newer model modules

HOUSE_TESTS = [
    "tests/ui/explain/test_explain_panels.py",
    "tests/ui/explain/test_explain_openings.py",
    "tests/project/test_explain_panels_in_docs.py",
    "tests/project/test_house_rules.py",
    "tests/project/test_benchmark_report.py",
    "tests/project/test_named_paths.py",
    "tests/project/test_readme.py",
    "tests/model/training/test_ship_checkpoint.py",
]  # how the house is kept: the panel list and the texts written from it, the repository's own checks

# Independent test files: a fault is caught by "both" exactly when "old" or "new" catches it.
SUITES = {
    "old": OLD_MODEL_TESTS,
    "new": PROVENANCE_TESTS + VIEW_TESTS,
    "views": VIEW_TESTS,
    "house": HOUSE_TESTS,
    "both": PROVENANCE_TESTS + VIEW_TESTS + OLD_MODEL_TESTS,
}


if str(ROOT) not in sys.path:  # run as a file: import scripts.mutation_faults as the package module
    sys.path.insert(0, str(ROOT))
from scripts.mutation_faults import MODEL_FAULTS  # noqa: E402
from scripts.mutation_faults_corpus import CORPUS_FAULTS  # noqa: E402
from scripts.mutation_faults_house import HOUSE_FAULTS  # noqa: E402
from scripts.mutation_faults_lesson import LESSON_FAULTS, LESSON_TESTS  # noqa: E402
from scripts.mutation_faults_opus_mt import OPUS_MT_FAULTS  # noqa: E402
from scripts.mutation_faults_page import PAGE_FAULTS, PAGE_TESTS  # noqa: E402
from scripts.mutation_faults_readouts import READOUT_FAULTS  # noqa: E402
from scripts.mutation_faults_screen import SCREEN_FAULTS  # noqa: E402
from scripts.mutation_faults_serving import SERVING_FAULTS, SERVING_TESTS  # noqa: E402
from scripts.mutation_faults_views import VIEW_FAULTS  # noqa: E402

FAULTS = [
    *MODEL_FAULTS,
    *READOUT_FAULTS,
    *OPUS_MT_FAULTS,
    *VIEW_FAULTS,
    *CORPUS_FAULTS,
    *SCREEN_FAULTS,
    *HOUSE_FAULTS,
    *SERVING_FAULTS,
    *PAGE_FAULTS,
    *LESSON_FAULTS,
]
SUITES["serving"] = SERVING_TESTS  # --suite serving --only zerogpu-,examples-,api-,space-,weights-,card-
SUITES["page"] = PAGE_TESTS  # --suite page --only page-,translator-
SUITES["lesson"] = LESSON_TESTS  # --suite lesson --only lesson- (--browser: the page in Chromium too)


def copy_repository(destination: Path) -> None:
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", "runs")
    shutil.copytree(ROOT, destination, ignore=ignore, symlinks=True)


def run_tests(workdir: Path, tests: list[str], timeout: float, browser: bool = False) -> tuple[str, float, str]:
    """-> (outcome 'passed' | 'failed' | 'timeout', seconds, last output line); the browser tests among `tests` are
    left out unless `browser`."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no stale .pyc after an edit within a second
    marks = "" if browser else "not browser"
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", marks, *tests]
    start = time.time()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.time() - start, ""
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return ("passed" if done.returncode == 0 else "failed"), time.time() - start, (lines[-1] if lines else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--suite",
        choices=sorted(SUITES),
        default="both",
        help="old: the model tests; new: provenance tests; both (default)",
    )
    parser.add_argument("--tests", nargs="+", help="explicit pytest selection (overrides --suite)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per fault run")
    parser.add_argument("--only", default="", help="comma-separated name prefixes of faults to run")
    parser.add_argument(
        "--browser", action="store_true", help="run the browser tests among --tests too (left out by default)"
    )
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    parser.add_argument(
        "--stale", action="store_true", help="list faults whose snippet is not exactly once in its file"
    )
    args = parser.parse_args(argv)
    args.tests = args.tests or SUITES[args.suite]

    faults = [f for f in FAULTS if not args.only or any(f.name.startswith(p) for p in args.only.split(","))]
    if args.list:
        for fault in faults:
            print(f"{fault.name:40s} {fault.file:22s} {fault.description}")
        return 0
    if args.stale:
        stale = [
            f
            for f in faults
            if not (ROOT / f.file).exists() or (ROOT / f.file).read_text(encoding="utf-8").count(f.old) != 1
        ]
        for fault in stale:
            print(f"stale     {fault.name:40s} {fault.file}")
        print(f"{len(stale)} of {len(faults)} faults stale")
        return 1 if stale else 0
    missing = [t for t in args.tests if not (ROOT / t.split("::")[0]).exists()]
    if missing:
        print(f"error: no such test file(s): {', '.join(missing)}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="mutation-") as temporary:
        workdir = Path(temporary) / "repo"
        copy_repository(workdir)
        outcome, seconds, summary = run_tests(workdir, args.tests, args.timeout, args.browser)
        print(f"baseline (no fault): {outcome} in {seconds:.0f} s  {summary}", flush=True)
        if outcome != "passed":
            print("error: the selected tests fail without any fault; fix that first", file=sys.stderr)
            return 2
        results: dict[str, list[str]] = {"caught": [], "timeout": [], "SURVIVED": [], "stale": []}
        for fault in faults:
            path = workdir / fault.file
            original = path.read_text(encoding="utf-8") if path.exists() else None
            count = original.count(fault.old) if original is not None else 0
            if count != 1:
                status = "stale"
                detail = "file missing" if original is None else f"snippet found {count} times, expected once"
            else:
                path.write_text(original.replace(fault.old, fault.new), encoding="utf-8")
                try:
                    outcome, seconds, summary = run_tests(workdir, args.tests, args.timeout, args.browser)
                finally:
                    path.write_text(original, encoding="utf-8")
                status = {"failed": "caught", "timeout": "timeout", "passed": "SURVIVED"}[outcome]
                detail = f"{seconds:.0f} s  {summary}"
            results[status].append(fault.name)
            print(f"{status:9s} {fault.name:40s} {detail}", flush=True)

    caught = len(results["caught"]) + len(results["timeout"])
    ran = caught + len(results["SURVIVED"])
    print(
        f"\nscore: {caught}/{ran} caught ({100 * caught / max(ran, 1):.0f}%); stale (not run): {len(results['stale'])}"
    )
    for status in ("SURVIVED", "stale"):
        if results[status]:
            print(f"{status}: {', '.join(results[status])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
