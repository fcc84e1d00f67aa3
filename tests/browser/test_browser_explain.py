"""End to end: the Explain tab (ui/explain/) of `python3 app.py` on the tiny checkpoint, in headless Chromium.

One flow over every panel: switch heads off, branch at a step, the logit lens, beam vs greedy,
word alignment (Pharaoh), head diagnostics opening a head in the Attention tab, and translation
without positional encodings. Reuses the server and browser fixtures of tests/conftest.py.
"""

from __future__ import annotations

import re

import pytest

from browser_helpers import GERMAN, needs_chromium, open_panel, translate, wait_last_step


@pytest.mark.browser
@needs_chromium
def test_explain_tab_panels(page):
    from playwright.sync_api import expect

    translate(page, GERMAN)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    wait_last_step(page)  # Translate shows the whole translation; step from the first
    page.click("#step-first")
    expect(page.locator("#step input[type=number]")).to_have_value("1")
    page.click("#step-next")
    expect(page.locator("#step input[type=number]")).to_have_value("2")
    page.get_by_role("tab", name="Explain").click()

    # 1. head ablation: two heads off, re-decode, both outputs and the per-step change
    page.locator("#ablate-encoder-1").get_by_text("H1").click()
    page.locator("#ablate-cross-2").get_by_text("H3").click()
    page.click("#ablate-run")
    expect(page.locator("#ablate-result")).to_contain_text("Original (greedy)")
    expect(page.locator("#ablate-result")).to_contain_text("Heads switched off")
    expect(page.locator("#ablate-plot .gtitle")).to_contain_text(
        "Encoder self-attention L1 H1; Cross-attention (encoder → decoder) L2 H3"
    )
    page.click("#ablate-clear")
    expect(page.locator("#ablate-result")).not_to_contain_text("Original")

    # 2. branching at step 2 with the dropdown's candidate
    open_panel(page, "Branch")
    expect(page.locator("#branch-candidate")).to_contain_text("Candidate to force at step 2")
    page.click("#branch-run")
    expect(page.locator("#branch-result")).to_contain_text("forced at step 2")
    expect(page.locator("#branch-result .tok.forced")).to_have_count(1)

    # 3. logit lens follows the step
    open_panel(page, "Logit lens")
    expect(page.locator("#lens-plot .gtitle")).to_contain_text("Step 2")
    page.click("#step-next")
    expect(page.locator("#lens-plot .gtitle")).to_contain_text("Step 3")

    # 4. beam search beside greedy
    open_panel(page, "Beam vs greedy")
    page.click("#beam-run")
    expect(page.locator("#beam-result table tr").first).to_contain_text("leaves greedy")
    expect(page.locator("#beam-result")).to_contain_text("greedy")

    # 5. word alignment: links and Pharaoh pairs
    open_panel(page, "Word alignment")
    page.wait_for_selector("#align-plot .js-plotly-plot")
    pharaoh = page.locator("#align-pharaoh textarea")
    expect(pharaoh).to_have_value(re.compile(r"^(\d+-\d+)( \d+-\d+)*$"))
    page.locator("#align-layers").get_by_text("1", exact=True).click()  # average layer 2 only
    expect(page.locator("#align-plot .gtitle")).to_contain_text("decoder layer(s) 2")

    # 6. head diagnostics: choose a head, the Attention tab opens on it
    open_panel(page, "Head diagnostics")
    page.wait_for_selector("#diag-plot .js-plotly-plot")
    page.locator("#diag-kind").get_by_text("Cross-attention").click()
    expect(page.locator("#diag-plot .gtitle")).to_contain_text("Cross-attention")
    page.locator("#diag-head input").click()
    page.get_by_role("option", name=re.compile("layer 2, head 3")).click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text(
        "Cross-attention (encoder → decoder), layer 2, head 3"
    )
    expect(page.locator("#head").get_by_label("head 3")).to_be_checked()

    # 7. without positional encodings
    page.get_by_role("tab", name="Explain").click()
    open_panel(page, "Without positions")
    page.click("#nope-run")
    expect(page.locator("#nope-result")).to_contain_text("Without positional encodings")
    expect(page.locator("#nope-attention .gtitle")).to_contain_text("layer 1, head 1")
    page.locator("#nope-head").get_by_text("2", exact=True).click()
    expect(page.locator("#nope-attention .gtitle")).to_contain_text("layer 1, head 2")
    assert page.dialogs == []


@pytest.mark.browser
@needs_chromium
def test_a_new_translation_clears_the_explain_results(page):
    from playwright.sync_api import expect

    translate(page, GERMAN)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    page.get_by_role("tab", name="Explain").click()
    open_panel(page, "Beam vs greedy")
    page.click("#beam-run")
    expect(page.locator("#beam-result table")).to_be_visible()
    translate(page, "Zwei Hunde spielen im Schnee.")
    expect(page.locator("#beam-result table")).to_have_count(0)
