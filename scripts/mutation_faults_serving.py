"""Planted faults in serving and deployment (scripts/mutation_check.py --suite serving): ZeroGPU durations, the
examples' cache, the front-end files compressed once, the API, the model repo a Space points at, the model card's data sets. Same form as
scripts/mutation_faults.py's `Fault`."""

from __future__ import annotations

from scripts.mutation_faults import Fault

SERVING_TESTS = [
    "tests/serving/test_zerogpu.py",
    "tests/ui/test_mcp.py",
    "tests/project/test_deploy.py",
    "tests/project/test_snippets.py",
    "tests/ui/test_compressed_assets.py",
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
        '        app_kwargs={"middleware": [Middleware(CompressedAssets)]},\n',
        "",
        "the served app compresses Plotly's bundle again for every visitor",
    ),
]
