"""The planted faults of scripts/mutation_check.py in decoding and scoring an OPUS-MT (Marian) checkpoint: the
beam search's rules for it (tests/model/decoding/test_beam_marian.py), greedy's end at the length limit
(tests/model/decoding/test_finished_sentence.py), scripts/score_checkpoint.py
(tests/project/test_score_checkpoint.py), the benchmark's random OPUS-MT folder
(tests/project/test_benchmarks.py), and the app's OPUS-MT page (tests/ui/test_opus_mt_page.py; `--suite views`). Run after MODEL_FAULTS (scripts/mutation_faults.py), before VIEW_FAULTS. One
exact text replacement each; `old` must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale`).
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

OPUS_MT_FAULTS = [
    Fault(
        "beam-marian-limit-not-forced",
        "model/decoding/beam.py",
        "log_probs = torch.where(at_limit.repeat_interleave(K)[:, None], only_eos, log_probs)",
        "log_probs = log_probs",
        "beam search ignores forced_eos_token_id: beams at the length limit are left unfinished",
    ),
    Fault(
        "beam-marian-forced-eos-free",
        "model/decoding/beam.py",
        "only_eos[:, config.eos_id] = log_probs[:, config.eos_id]",
        "only_eos[:, config.eos_id] = 0.0",
        "the forced </s> adds log P = 0 (transformers' convention) instead of the model's own log P",
    ),
    Fault(
        "beam-marian-pad-generated",
        "model/decoding/beam.py",
        'log_probs = log_probs.index_fill(1, never_generated(config, device), float("-inf"))',
        "log_probs = log_probs",
        "beam search may generate Marian's <pad> start token",
    ),
    Fault(
        "score-batch-limit-not-forced",
        "model/training/evaluate.py",
        "        ids[-1] = config.eos_id\n",
        "        pass\n",
        "batched greedy scoring lets a short sentence run past its own forced </s> (the batch's longer budget)",
    ),
    Fault(
        "score-references-from-the-source-side",
        "scripts/score_checkpoint.py",
        "_, references = read_split(data_dir, split, target_language)",
        "_, references = read_split(data_dir, split, source_language)",
        "the scorer compares translations with the source lines",
    ),
    Fault(
        "score-beam-as-greedy",
        "scripts/score_checkpoint.py",
        'DECODINGS = {"greedy": 1, "beam4": 4}',
        'DECODINGS = {"greedy": 1, "beam4": 1}',
        "the scorer's beam 4 decodes greedily",
    ),
    Fault(
        "opus-mt-folder-ends",
        "benchmarks/opus_mt_folder.py",
        "    if not ends:\n",
        "    if ends:\n",
        "the benchmark's random OPUS-MT folder ends its outputs early (its budget row would not reach the limit)",
    ),
    Fault(
        "opus-mt-page-pe-halves-as-interleaved",
        "ui/positions.py",
        "figure = visualizer.positional_encoding_figure(table, tokens=trace.source_tokens, layout=layout)",
        "figure = visualizer.positional_encoding_figure(table, tokens=trace.source_tokens)",
        "the positional-encoding view names Marian's halves table as interleaved (even sin, odd cos)",
    ),
    Fault(
        "opus-mt-page-pe-halves-split-wrong",
        "visualizer/positional.py",
        'return ("cos", dim - half) if dim >= half else ("sin", dim)',
        'return ("cos", dim - half) if dim > half else ("sin", dim)',
        "the halves layout's first cosine column is named a sine",
    ),
    Fault(
        "opus-mt-page-own-only-panel-shown",
        "ui/explain/tab.py",
        "missing = panel.unavailable_on(page.checkpoint)",
        'missing = ""',
        "the training film and corpus panels build their controls on the OPUS-MT page",
    ),
    Fault(
        "opus-mt-page-published-scores-missing",
        "ui/model_tab.py",
        '+ visualizer.published_scores_markdown(checkpoint.metrics.get("published_scores"))',
        "+ visualizer.published_scores_markdown([])",
        "the OPUS-MT Model tab leaves out the card's published scores",
    ),
    Fault(
        "opus-mt-page-scores-not-named-published",
        "ui/model_tab.py",
        "f\"**Published scores**: as published by {info.publisher or 'its publisher'} (the model card), \"\n"
        '        "not measured here.",',
        'f"**Scores**",',
        "the OPUS-MT Model tab shows the card's scores without saying they are published, not measured here",
    ),
    Fault(
        "opus-mt-page-rerun-without-direction",
        "ui/explain/panel.py",
        "probs = jobs.token_probabilities(runner, trace.source_ids, trace.output_ids, ablation, direction=trace.direction)",
        "probs = jobs.token_probabilities(runner, trace.source_ids, trace.output_ids, ablation)",
        "a re-run on ids names no direction: on OPUS-MT the runner cannot pick the checkpoint",
    ),
    Fault(
        "opus-mt-page-default-direction-ignored",
        "serving/runner.py",
        "        bound.apply_defaults()\n",
        "",
        "the runner ignores a job's default direction (the paper's sentences fail on OPUS-MT)",
    ),
    Fault(
        "opus-mt-page-own-guard-rails",
        "serving/translation.py",
        "trace.source_text, tuple(trace.source_tokens), trace.direction, trace.model == OWN.key, trace.translation",
        "trace.source_text, tuple(trace.source_tokens), trace.direction, True, trace.translation",
        "OPUS-MT's notices measure its input against the own model's training data and name a target tag",
    ),
    Fault(
        "ending-any-end-at-the-limit-imposed",
        "model/decoding/greedy.py",
        "imposed = (tokens != choice) & ~finished  # (B,)",
        "imposed = (tokens == config.eos_id) & ~finished  # (B,)",
        "an end the model chose itself at the last step allowed is reported as imposed by the rule",
    ),
    Fault(
        "ending-imposed-end-unnoticed",
        "model/decoding/greedy.py",
        'stopped_by = "eos_at_limit" if imposed else',
        'stopped_by = "eos" if imposed else',
        "an end written by forced_eos_token_id at the limit reads as the model's own",
    ),
    Fault(
        "notice-imposed-end-silent",
        "serving/translation.py",
        '    if trace.stopped_by == "eos_at_limit":\n',
        '    if trace.stopped_by == "never":\n',
        "the page says nothing when the decoding rule, not the model, ended the sentence",
    ),
    # The model menu and OPUS-MT loaded after start-up (tests/ui/test_model_menu.py), the deploy with OPUS-MT
    # (tests/project/test_deploy.py), ZeroGPU durations per model (tests/serving/test_zerogpu.py), the Hub check
    # (tests/project/test_check_opus_mt.py):
    #   --tests tests/ui/test_model_menu.py tests/project/test_deploy.py tests/serving/test_zerogpu.py
    #           tests/project/test_check_opus_mt.py --only menu-,later-,deploy-opus,zerogpu-scale,check-opus
    Fault(
        "menu-no-download-size",
        "ui/models.py",
        "    if loaded or not info.download_mb:\n",
        "    if True:\n",
        "the menu lists OPUS-MT without what it is and what picking it downloads",
    ),
    Fault(
        "later-exception-text",
        "ui/later_model.py",
        "    return UNREACHABLE if isinstance(error, MarianDownloadError) else UNREADABLE",
        "    return str(error)",
        "a failed download shows the library's exception text instead of the plain sentence",
    ),
    Fault(
        "later-log-several-lines",
        "ui/models.py",
        "        return LoadedModel(OPUS_MT.key, problem=why_not(error), error=one_line(error))",
        "        return LoadedModel(OPUS_MT.key, problem=why_not(error), error=str(error))",
        "a failed download writes the Hub's error to the log over several lines",
    ),
    Fault(
        "later-failure-logged-twice",
        "ui/later_model.py",
        '                self.finish("failed", loaded.problem or UNREADABLE, attempt, loaded.error)\n',
        '                LOG.warning("OPUS-MT not loaded: %s", loaded.error)\n'
        '                self.finish("failed", loaded.problem or UNREADABLE, attempt, loaded.error)\n',
        "a failed load is logged where it failed and again where it ends: two lines per failure",
    ),
    Fault(
        "menu-entry-ignores-failure",
        "ui/models.py",
        "    if progress is not None and progress.entry:\n",
        "    if False:\n",
        "after a failed download the menu still says picking OPUS-MT downloads about 600 MB",
    ),
    Fault(
        "later-line-no-retry",
        "ui/later_model.py",
        'Hugging Face Hub; {AGAIN}, or copy "',
        'Hugging Face Hub; copy "',
        "the line under the menu does not say that picking OPUS-MT again tries once more",
    ),
    Fault(
        "later-bytes-not-counted",
        "ui/later_model.py",
        "                self.bytes += int(n or 0)\n",
        "                self.bytes += 0\n",
        "the progress line never counts the downloaded bytes",
    ),
    Fault(
        "later-asker-not-sent",
        "ui/models.py",
        'return update(progress, "open" if wants and progress.state == "ready" else "")',
        'return update(progress, "")',
        "the visitor who picked OPUS-MT is never taken to its page when it is ready",
    ),
    Fault(
        "later-other-threads-render",
        "ui/later_model.py",
        "        return original(block) if threading.get_ident() == builder else block\n",
        "        return original(block)\n",
        "a component made by another thread's listener joins the page being built",
    ),
    Fault(
        "later-start-up-reason-dropped",
        "ui/models.py",
        '    asked = opus_mt.problem if chosen == OPUS_MT.key else ""',
        '    asked = ""',
        "--model opus-mt without the Hub: the page does not say why the own model is shown",
    ),
    Fault(
        "deploy-opus-variable-off",
        "scripts/deploy_space.py",
        "str(int(opus_mt))",
        '"0"',
        "the Space never loads OPUS-MT at start-up",
    ),
    Fault(
        "deploy-opus-models-not-listed",
        "scripts/space_upload.py",
        "    return [*(repo for repo, _ in OPUS_MT_REPOS.values() if opus_mt), model_repo]",
        "    return [model_repo]",
        "the Space's front matter does not list OPUS-MT's repos",
    ),
    Fault(
        "zerogpu-scale-ignored",
        "serving/zerogpu.py",
        "    return max(1.0, checkpoint.model.num_parameters() / measured) if measured else 1.0",
        "    return 1.0",
        "an OPUS-MT call asks for the own model's duration",
    ),
    Fault(
        "check-opus-attention-skipped",
        "scripts/check_opus_mt.py",
        "            attention = max(attention, float((mine.weights - reference).abs().max()))",
        "            attention = max(attention, float((mine.weights - mine.weights).abs().max()))",
        "the Hub check reports the attention equal without comparing it",
    ),
    Fault(
        "check-opus-greedy-unchecked",
        "scripts/check_opus_mt.py",
        "            agree += generated[0, 1:].tolist() == list(trace.output_ids)",
        "            agree += 1",
        "the Hub check counts every greedy sentence as agreeing",
    ),
]
