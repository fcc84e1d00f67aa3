"""The planted faults of scripts/mutation_check.py in how the house is kept (the third part of its list, after
scripts/mutation_faults.py and scripts/mutation_faults_views.py): the one list of Explain panels and the texts
written from it, the one way a panel keeps results, the checks of the repository itself (house rules, named paths)
and shipping a checkpoint. One exact text replacement each; `old` must occur exactly once in `file`.
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

HOUSE_FAULTS = [
    # ---- the panel list (ui/explain/panels.py, tab.py, panel.py): tests/ui/explain/test_explain_panels.py, test_explain_openings.py
    Fault(
        "panels-unsorted",
        "ui/explain/panels.py",
        "key=lambda panel: panel.place)",
        "key=lambda panel: panel.id)",
        "the panels are ordered by id, not by their place",
    ),
    Fault(
        "panels-duplicates-allowed",
        "ui/explain/panels.py",
        "        if repeated:\n",
        "        if repeated and False:\n",
        "two panels with one place, id or title are not refused",
    ),
    Fault(
        "panels-tab-drops-the-last",
        "ui/explain/tab.py",
        "for panel in PANELS:",
        "for panel in PANELS[:-1]:",
        "the tab lays out every declared panel but the last",
    ),
    Fault(
        "panels-lead-without-title",
        "ui/explain/panel.py",
        'return f"{self.title}: {self.lead}"',
        "return self.lead",
        "a panel's lead no longer opens with its title",
    ),
    Fault(
        "panels-doc-list-without-leads",
        "scripts/views_doc.py",
        'f"- **{panel.title}**: {panel.lead}"',
        'f"- **{panel.title}**"',
        "docs/views.md's panel list is written without what each panel shows",
    ),
    # ---- what a panel's result opens on (Panel.reading): tests/ui/explain/test_explain_readings.py,
    # tests/browser/test_browser_explain_openings.py
    Fault(
        "reading-tokens-uncounted",
        "ui/explain/panel.py",
        "n, changed = len(original.output_ids), changed_tokens(original.output_ids, result.trace.output_ids)",
        "n, changed = len(original.output_ids), 1",
        "an intervention's opening says one token changed, whatever the run did",
    ),
    # the branch's comparison, aligned (model/analysis/readouts.py aligned_edits): tests/ui/explain/test_explain_readings.py,
    # tests/model/analysis/test_readouts.py
    Fault(
        "branch-alignment-skips-blindly",
        "model/analysis/readouts.py",
        "elif j == len(b) or (i < len(a) and longest[i + 1][j] >= longest[i][j + 1]):",
        "elif j == len(b) or i < len(a):",
        "the alignment drops the original's token at every difference: a word inserted reads as the rest replaced",
    ),
    Fault(
        "branch-marks-by-position",
        "ui/explain/panel.py",
        "was |= dict.fromkeys(edit.original, edit.kind)",
        "was |= dict.fromkeys(range(edit.original.start, len(original)), edit.kind)",
        "the original's card marks every token from the first difference on, as a comparison by position does",
    ),
    Fault(
        "branch-kept-counts-the-branch",
        "ui/explain/panel.py",
        "kept = n - sum(len(edit.original) for edit in edits)",
        "kept = n - sum(len(edit.changed) for edit in edits)",
        "the branch's opening counts the branch's new tokens as the original's lost ones",
    ),
    Fault(
        "reading-beam-jargon-first",
        "ui/explain/beam.py",
        'return f"{keeping} ends in the same translation. Beam search (section 6.1) keeps the greedy translation."',
        'return "Beam search (section 6.1) keeps the greedy translation."',
        "beam search's result opens on its technical name, not on what it means",
    ),
    Fault(
        "reading-moved-head-first",
        "ui/explain/changes.py",
        "key=lambda found: change.rows[found[0]].moved[found[1]],",
        "key=lambda found: -change.rows[found[0]].moved[found[1]],",
        "the step's opening names the head that moved least as the one that moved most",
    ),
    # ---- kept results (kept_for / sentence_matches): tests/ui/explain/test_explain_panels.py
    Fault(
        "kept-no-pe-for-another-sentence",
        "ui/explain/no_pe.py",
        '        if not sentence_matches(trace, values[kept]):\n            return {result: "", probabilities: None}',
        '        if values[kept] is None:\n            return {result: "", probabilities: None}',
        "Without positions draws a run kept for another translation",
    ),
    Fault(
        "kept-cache-for-another-sentence",
        "ui/explain/cache.py",
        "        if not sentence_matches(trace, values[kept]):",
        "        if values[kept] is None:",
        "the KV cache panel draws a recording kept for another translation",
    ),
    # ---- the repository's own checks: tests/project/test_house_rules.py, test_benchmark_report.py
    Fault(
        "house-rules-skip-benchmarks",
        "tests/project/test_house_rules.py",
        'NOT_PRODUCT = {"tests"}',
        'NOT_PRODUCT = {"tests", "benchmarks"}',
        "the house rules leave benchmarks/ unchecked",
    ),
    Fault(
        "report-views-columns-swapped",
        "benchmarks/report.py",
        'r["ms"]["median"], r["ms"]["p95"], r["cpu_ms"]["median"]]',
        'r["ms"]["p95"], r["ms"]["median"], r["cpu_ms"]["median"]]',
        "the views table prints the p95 under 'median' and the median under 'p95'",
    ),
    # ---- named paths and history in the docs: tests/project/test_named_paths.py, test_readme.py
    Fault(
        "docs-name-a-moved-file",
        "docs/testing.md",
        "| `tests/support/` | shared helpers",
        "| `tests/helpers/` | shared helpers",
        "the testing guide names a folder that is not there",
    ),
    Fault(
        "docs-tell-history",
        "docs/testing.md",
        "Tests are laid out like the code,",
        "Tests are no longer flat; they are laid out like the code,",
        "the testing guide tells how the tests were rather than how they are",
    ),
    # ---- shipping a checkpoint (scripts/ship_checkpoint.py, --keep-evaluations): tests/model/training/test_ship_checkpoint.py
    Fault(
        "ship-average-without-the-newest",
        "scripts/ship_checkpoint.py",
        "evaluations = kept_evaluations(run)[-args.last :]",
        "evaluations = kept_evaluations(run)[-args.last - 1 : -1]",
        "the shipped average leaves out the newest kept evaluation",
    ),
    Fault(
        "ship-validates-the-newest",
        "scripts/ship_checkpoint.py",
        "scores = validate_checkpoint(staging, run_arguments(metrics))",
        "scores = validate_checkpoint(evaluations[-1], run_arguments(metrics))",
        "metrics.json's validation is the newest evaluation's, not the shipped average's",
    ),
    Fault(
        "ship-film-keeps-the-old-last-frame",
        "scripts/ship_checkpoint.py",
        'if frame["step"] < step]',
        'if frame["step"] <= step]',
        "the shipped film keeps the run's frame of the newest step beside the average's",
    ),
    Fault(
        "ship-counts-not-added",
        "scripts/ship_checkpoint.py",
        "round(previous.get(key, 0) + metrics.get(key, 0),",
        "round(metrics.get(key, 0),",
        "tokens and seconds count only the last run, not the runs it continues",
    ),
    Fault(
        "ship-corpus-of-another-folder",
        "scripts/ship_checkpoint.py",
        'corpus_heads.main(["--checkpoint", str(staging),',
        'corpus_heads.main(["--checkpoint", str(evaluations[-1]),',
        "the corpus file is computed for the newest evaluation and left beside it",
    ),
    Fault(
        "train-keeps-no-evaluations",
        "model/training/train.py",
        "        if args.keep_evaluations:\n",
        "        if args.keep_evaluations and False:\n",
        "--keep-evaluations keeps nothing",
    ),
    # ---- a broken file of a checkpoint (model/checkpoints/reading.py): tests/ui/test_broken_checkpoint_files.py
    Fault(
        "broken-file-npz-raises-again",
        "model/checkpoints/reading.py",
        "FILE_ERRORS = (OSError, ValueError, zipfile.BadZipFile, zlib.error,",
        "FILE_ERRORS = (OSError, ValueError, zlib.error,",
        "a cut-off film.npz or corpus_heads.npz (BadZipFile) stops the app at start again",
    ),
    Fault(
        "broken-file-utf8-raises-again",
        "model/checkpoints/reading.py",
        "FILE_ERRORS = (OSError, ValueError,",
        "FILE_ERRORS = (OSError, json.JSONDecodeError,",
        "a file that is not UTF-8 (config.json, metrics.json, training_log.json) raises UnicodeDecodeError again",
    ),
    Fault(
        "broken-file-metrics-unloads-the-model",
        "model/checkpoints/checkpoint.py",
        "metrics, problem = read_optional_file(directory / METRICS_FILE, read_json_object, {})",
        'metrics, problem = read_json_object(directory / METRICS_FILE), ""',
        "a broken metrics.json (an optional file) leaves the page with no model",
    ),
]
