"""The planted faults of scripts/mutation_check.py in a lesson (lesson/): what the exported page draws. One exact
text replacement each; `old` must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale` checks).

    python3 scripts/mutation_check.py --suite lesson --only lesson-                # the data tests, no browser
    python3 scripts/mutation_check.py --browser --suite lesson --only lesson-      # with the page in Chromium
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

LESSON_TESTS = ["tests/lesson/test_lesson_data.py", "tests/browser/test_browser_lesson.py"]

LESSON_FAULTS = [
    # ---- where the lesson opens: tests/ui/test_lesson_button.py (the page's state -> the start record) and, with
    # --browser, tests/browser/test_browser_lesson.py (the page opens on it)
    Fault(
        "lesson-start-at-the-attention-tabs-view",
        "ui/lesson.py",
        '    tab, view = shown["tab"], shown["tab"] if shown["tab"] in LESSON_VIEWS else NEAREST_VIEW\n',
        '    tab, view = shown["tab"], NEAREST_VIEW\n',
        "a lesson downloaded on the Next token, Positions or Masks tab opens on Attention",
    ),
    Fault(
        "lesson-start-compare-controls-ignored",
        "ui/share.py",
        '    if tab == "compare" and targets.compare is not None:\n        return {"tab": tab, **targets.compare.link_fields(values)}\n',
        "",
        "a lesson (and the share link) from the Compare tab names the Attention tab's kind, layer and head",
    ),
    Fault(
        "lesson-start-note-hidden",
        "lesson/player.js",
        "    $('start-note').hidden = !START.note;\n",
        "    $('start-note').hidden = true;\n",
        "the lesson's page never says that it opened on another view than the app's",
    ),
    Fault(
        "lesson-start-head-one-off",
        "lesson/player.js",
        "String(START.head - 1)",
        "String(START.head)",
        "the lesson opens on the head after the one on the app's screen",
    ),
    Fault(
        "lesson-start-step-ignored",
        "lesson/player.js",
        "step: START.step === null ? Infinity : START.step - 1,",
        "step: Infinity,",
        "the lesson opens at the last step, not the app's",
    ),
    Fault(
        "lesson-layers-reversed",
        "lesson/figures.py",
        "        arrays[kind.weights_field] = weights\n",
        "        arrays[kind.weights_field] = weights[::-1].copy()\n",
        "the lesson exports every kind's layers in reverse order (layer 1 shows the last layer's weights)",
    ),
    Fault(
        "lesson-step-off-by-one",
        "lesson/player.js",
        "return structuredClone(Array.isArray(figures) ? figures[state.step] : figures);",
        "return structuredClone(Array.isArray(figures) ? figures[Math.min(state.step + 1, figures.length - 1)] : figures);",
        "the page's per-step views (next token, masks) show the next step's figure",
    ),
    Fault(
        "lesson-attention-step-off-by-one",
        "lesson/player.js",
        "const rows = kind.grows ? state.step : Infinity",
        "const rows = kind.grows ? state.step + 1 : Infinity",
        "a decoder kind's heatmap shows one row more than the step has decoded",
    ),
    Fault(
        "lesson-mask-rows-shifted",
        "lesson/figures.py",
        "[spec(step_masks(trace, batch, t)) for t in range(trace.num_steps)]",
        "[spec(step_masks(__import__('dataclasses').replace(trace, decoder_mask=np.roll(trace.decoder_mask, 1, axis=0)),"
        " batch, t)) for t in range(trace.num_steps)]",
        "the lesson's masks view draws the decoder's mask with its rows shifted down by one",
    ),
    Fault(
        "lesson-hidden-controls-shown",
        "lesson/page.css",
        "[hidden] { display: none !important; }",
        "",
        "the kind, layer and head buttons stay on screen over Next token, Masks and Positional encoding",
    ),
]
