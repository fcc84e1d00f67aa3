"""Planted faults in the page's one state (scripts/mutation_check.py --suite page): the one Translate action, the
listeners that draw what each action changed (serving/translation.py, ui/redraw.py, ui/session.py) and a page's
events one at a time (ui/session_order.py). Same form as scripts/mutation_faults.py's `Fault`; the browser faults are caught by tests/browser/test_browser_page_state.py
(`--browser --tests tests/browser/test_browser_page_state.py --only page-browser-`)."""

from __future__ import annotations

from scripts.mutation_faults import Fault

PAGE_TESTS = [
    "tests/serving/test_translation.py",
    "tests/ui/test_page_listeners.py",
    "tests/ui/test_page_controls.py",
    "tests/ui/test_fair_queue.py",
    "tests/ui/test_app.py",
    "tests/ui/test_start_share_tour.py",
    "tests/ui/test_compare_view.py",
    "tests/ui/test_session_order.py",
    "tests/ui/test_endpoint_properties.py",
    "tests/ui/test_session_renewal.py",
]

PAGE_FAULTS = [
    # ---- a repaired share link says what it changed (ui/share.py repair_notice): tests/ui/test_start_share_tour.py
    Fault(
        "link-clamp-unsaid",
        "ui/share_link.py",
        "        elif asked != str(getattr(shown, name)):",
        "        elif False:",
        "a link's step past the end, or a layer or head the model lacks, is clamped without a word",
    ),
    Fault(
        "link-good-link-said-repaired",
        "ui/share_link.py",
        '    if not said:\n        return ""\n    return f"⚠️ {markdown_text(',
        '    return f"⚠️ {markdown_text(',
        "a link the page shows as it is still gets a line saying it was repaired",
    ),
    Fault(
        "page-pick-no-swap",
        "ui/session.py",
        "        if not swaps(trace, text, direction):\n",
        "        if True:\n",
        "picking the other direction with a translation on screen only changes the radio (nothing until Translate)",
    ),
    Fault(
        "page-swap-box-not-filled",
        "ui/session.py",
        "{header.source: trace.translation, **back}",
        "back",
        "a swap translates the translation back but leaves the old sentence in the box",
    ),
    Fault(
        "page-swap-edited-box",
        "ui/session.py",
        '        and (text or "").strip() == trace.source_text.strip()\n',
        "",
        "a pick swaps even where the box is empty or holds another sentence (what the visitor typed is lost)",
    ),
    Fault(
        "page-pick-outside-model-slots",
        "ui/session.py",
        "page.listen(header.direction.input, pick_direction, picked, [header.source, *outputs], **stay)",
        'page.listen(header.direction.input, pick_direction, picked, [header.source, *outputs], show_progress="hidden")',
        "a direction pick runs the model outside the model slots (not as Translate does)",
    ),
    Fault(
        "page-placeholder-fixed",
        "ui/session.py",
        "gr.update(placeholder=placeholder_for(values[header.direction]))",
        'gr.update(placeholder=placeholder_for("de-en"))',
        "the sentence box asks for a German sentence whatever the direction",
    ),
    Fault(
        "page-queue-slot-before-turn",
        "ui/runner.py",
        '"concurrency_limit": MODEL_EVENTS_UNDER_WAY}',
        '"concurrency_limit": MODEL_SLOTS}',
        "model events hold Gradio's slots while they wait for their page's turn: one page's flood stalls everyone",
    ),
    Fault(
        "page-queue-no-model-slot",
        "ui/runner.py",
        "        async with slots.held():\n",
        "        if True:\n",
        "model runs never wait for a model slot: a flood of sessions runs every computation at once",
    ),
    Fault(
        "page-stray-control",
        "ui/lesson.py",
        "lambda values: {save: gr.update(value=None, visible=False)}",
        "lambda values: {save: gr.DownloadButton(value=None, visible=False)}",
        "a follower's update built as a component while the page is laid out: a dead Download under every screen",
    ),
    Fault(
        "page-followers-never-run",
        "ui/redraw.py",
        'if shown.get(("follower", index)) != key:',
        'if shown.get(("follower", index)) is None and False:',
        "a new trace leaves the menus, the header and the player's range as they were",
    ),
    Fault(
        "page-refused-input-clears",
        "ui/session.py",
        '        return {header.notice: f"⚠️ {markdown_text(translated.refused)}"}',
        '        return {header.trace: None, header.notice: f"⚠️ {markdown_text(translated.refused)}"}',
        "a refused input wipes the translation and the figure that were on screen",
    ),
    Fault(
        "page-translate-lands-on-step-one",
        "ui/session.py",
        "        step: translated.step,",
        "        step: 1,",
        "Translate lands on step 1, not on the last step where every output row is drawn",
    ),
    Fault(
        "page-views-see-the-old-values",
        "ui/redraw.py",
        "        values = overlay(values, changes)\n        for index, follower",
        "        for index, follower",
        "the views are drawn with the values from before the action (the previous sentence's figure)",
    ),
    Fault(
        "translator-input-unchecked",
        "serving/translation.py",
        "        said = self.refusal_of_model(model) or refusal(text, direction)",
        "        said = self.refusal_of_model(model)",
        "the Translate action sends any input to the model",
    ),
    Fault(
        "endpoint-link-unicode-digit-let-through",
        "ui/share_link.py",
        "    if not (text.isascii() and text.isdigit()) or len(text) > LINK_NUMBER_DIGITS or int(text) < 1:",
        "    if not text.isdigit() or len(text) > LINK_NUMBER_DIGITS or int(text) < 1:",
        "a share link's ?head=² passes as a number: the page's load event fails and the sentence box stays empty",
    ),
    Fault(
        "endpoint-model-type-unchecked",
        "serving/translation.py",
        '        if model is not None and not isinstance(model, str):\n            return f"The model must',
        '        if False:\n            return f"The model must',
        "/translate with the model sent as an array or an object: a TypeError traceback, the client gets error null",
    ),
    Fault(
        "translator-notices-dropped",
        "serving/translation.py",
        "        return Translated(trace, notices(trace))",
        "        return Translated(trace, ())",
        "the answer carries no notices (a cut or wrong-language input looks like a good translation)",
    ),
    Fault(
        "page-events-side-by-side",
        "ui/session_order.py",
        "        if session_hash is None or not keeps_state(fn):",
        "        if True:",
        "a page's events run side by side: one reads the state from before the other's answer",
    ),
    Fault(
        "page-events-one-lock-for-everyone",
        "ui/session_order.py",
        "        async with self.session_turns.turn(session_hash):",
        '        async with self.session_turns.turn("everyone"):',
        "every visitor's events wait behind every other visitor's",
    ),
    Fault(
        "page-event-turns-never-dropped",
        "ui/session_order.py",
        "            if users == 1:\n                del self.locks[session_hash]",
        "            if users == 0:\n                del self.locks[session_hash]",
        "a lock is kept for every session that ever sent an event",
    ),
    Fault(
        "page-session-swapped",
        "ui/redraw.py",
        "        if not page_mark or page_mark == values.get(self.session_mark):",
        "        if not page_mark or page_mark != values.get(self.session_mark):",
        "a tab whose session the server dropped works on the start-up example's sentence, and a kept one is renewed",
    ),
    Fault(
        "page-session-renewed-from-the-state",
        "ui/renewal.py",
        '    view = parse_query(dict(parse_qsl(urlsplit(link or "").query)))',
        "    view = parse_query({})",
        "a dropped tab's sentence is made again from nothing the page holds: the start-up example's trace stays",
    ),
    Fault(
        "page-browser-step-button-no-input",
        "ui/js/keys.js",
        "  range.dispatchEvent(new Event('input', {bubbles: true}));",
        "",
        "a step button moves the slider in the browser but the page never draws the step",
    ),
]
