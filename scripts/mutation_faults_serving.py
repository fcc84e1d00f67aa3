"""Planted faults in serving and deployment (scripts/mutation_check.py --suite serving): ZeroGPU durations, the
examples' cache, the front-end files compressed once, the request limits and the app's own files, the deadlines of a
model loaded after start-up, the API, the model repo a Space points at, the model card's data sets. Same form as
scripts/mutation_faults.py's `Fault`."""

from __future__ import annotations

from scripts.mutation_faults import Fault

SERVING_TESTS = [
    "tests/serving/test_zerogpu.py",
    "tests/ui/test_mcp.py",
    "tests/project/test_deploy.py",
    "tests/project/test_snippets.py",
    "tests/ui/test_compressed_assets.py",
    "tests/ui/test_server_limits.py",
    "tests/ui/test_own_files.py",
    "tests/ui/test_later_model_deadlines.py",
]

SERVING_FAULTS = [
    Fault(
        "zerogpu-always-cold",
        "serving/zerogpu.py",
        'finished["at"] = clock()',
        'finished["at"] = None',
        "the dispatcher never counts a worker as warm: every call asks for the start-up allowance",
    ),
    Fault(
        "zerogpu-work-ignored",
        "serving/zerogpu.py",
        "cost_of(job.name).seconds(job.work(checkpoint, args, kwargs))",
        "cost_of(job.name).seconds(0.0)",
        "every call asks for its job's fixed cost, whatever its input",
    ),
    Fault(
        "attribution-work-linear",
        "serving/jobs.py",
        "(int(steps) + 2) * len(output_ids) * (len(source_ids) + len(output_ids))",
        "(int(steps) + 2) * len(output_ids)",
        "attribution's work leaves out the sentence length it scales with",
    ),
    Fault(
        "examples-not-cached",
        "serving/example_cache.py",
        "        if key not in self.examples:\n",
        "        if True:\n",
        "the built-in examples run the model (a GPU request on ZeroGPU) at every pick",
    ),
    Fault(
        "api-translation-trace-wrong-sentence",
        "ui/api.py",
        "return lean_trace_json(translated(text, direction, model).trace)",
        "return lean_trace_json(translated(text.upper(), direction, model).trace)",
        "the trace tool traces another sentence than it was given",
    ),
    Fault(
        "api-refusal-in-the-pages-words",
        "serving/translation.py",
        "raise gr.Error(API_WORDS.get(self.refused, self.refused), title=self.title, print_exception=False)",
        "raise gr.Error(self.refused, title=self.title, print_exception=False)",
        "the API refuses an empty text in the page's words (the text box), not naming its `text` parameter",
    ),
    Fault(
        "space-not-pointed-at-the-model",
        "scripts/deploy_space.py",
        'api.add_space_variable(space_id, HUB_VARIABLE, model_repo, description="model repo the app loads")',
        'api.add_space_variable(space_id, "ATTENTION_EXPLORER_CHECKPOINT", model_repo, description="")',
        "the Space's variable does not name the model repo for the app to load from the Hub",
    ),
    Fault(
        "space-readme-lists-no-model",
        "scripts/space_upload.py",
        'lambda _: f"models:{listed}"',
        'lambda _: "models: []"',
        "the Space's front matter does not list its model repo",
    ),
    Fault(
        "weights-only-no-restart",
        "scripts/deploy_space.py",
        "        api.restart_space(space_id)\n",
        "",
        "a weights-only update leaves the running Space on the old weights",
    ),
    Fault(
        "card-tatoeba-under-multi30k",
        "model/checkpoints/model_card.py",
        'if family == "tatoeba":',
        'if family == "tatoeba-never":',
        "the model-index files the Tatoeba scores under Multi30k",
    ),
    Fault(
        "assets-compressed-every-time",
        "ui/compressed_assets.py",
        "        if path not in self.kept:\n",
        "        if True:\n",
        "every request for a front-end file is compressed again",
    ),
    Fault(
        "assets-conditional-answered-from-memory",
        "ui/compressed_assets.py",
        'PASSED_ON = {"range", "if-none-match", "if-modified-since", "if-range"}',
        'PASSED_ON = {"range"}',
        "a conditional request gets the kept file instead of the server's own answer",
    ),
    Fault(
        "assets-failure-kept",
        "ui/compressed_assets.py",
        'if start["status"] != 200:',
        'if start["status"] == 999:',
        "a 404 is compressed and sent as a 200 from then on",
    ),
    Fault(
        "assets-not-installed",
        "ui/server.py",
        "                Middleware(CompressedAssets),\n",
        "",
        "the served app compresses Plotly's bundle again for every visitor",
    ),
    Fault(
        "limits-stated-body-unchecked",
        "ui/request_limits.py",
        "elif int(length) > self.max_body:",
        "elif int(length) > 1000 * self.max_body:",
        "a body over the limit that states its length is read and queued",
    ),
    Fault(
        "limits-chunked-body-unchecked",
        "ui/request_limits.py",
        "if size > self.max_body:",
        "if size > 1000 * self.max_body:",
        "a chunked body over the limit is read and queued",
    ),
    Fault(
        "limits-uploads-open",
        "ui/request_limits.py",
        'if UPLOAD_PATHS.search(scope.get("path", "")):',
        "if False:",
        "Gradio's upload route stores an anonymous client's file and answers with its server path",
    ),
    Fault(
        "own-files-any-served",
        "ui/own_files.py",
        "if wanted is not None and not made(self.blocks, wanted):",
        "if wanted is not None and not os.path.exists(wanted):",
        "a file another process wrote into the app's folder is served",
    ),
    Fault(
        "own-files-ended-runs-kept",
        "ui/own_files.py",
        "        shutil.rmtree(entry, ignore_errors=True)\n",
        "",
        "the folders of earlier runs are never removed",
    ),
    Fault(
        "later-load-no-deadline",
        "ui/later_model.py",
        "worker.join(self.timeout_s)",
        "worker.join()",
        "a load that never ends is waited for for ever: the menu says it downloads",
    ),
    Fault(
        "later-launch-wait-endless",
        "ui/later_model.py",
        "            raise LoadStopped(NOT_STARTED)\n",
        "            pass\n",
        "a page built before the server started waits for it for ever",
    ),
    Fault(
        "rails-checked-twice",
        "serving/translation.py",
        "@functools.lru_cache(maxsize=RAILS_KEPT)\n",
        "",
        "a Translate runs the language detector twice: its notices and the header's switch each check again",
    ),
]
