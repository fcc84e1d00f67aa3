"""No visible control outside a view, on any screen: every button, field and menu a visitor can see stands in a part
of the page that has a name of its own (the header, the player bar, a tab's view, the row under the figures), never
loose at the page's root (a component built while the page was laid out lands there: a dead "Run" or "▶ Play").

The page at 1280x720 light and 390x844 dark, after a Translate, with every top-level tab open in turn, scrolled to
its end. Gradio's own footer ("Use via API", "Settings") is the frame, not the page, and is left out.
"""

from __future__ import annotations

import pytest

from browser_helpers import GERMAN, TABS, needs_chromium, show_tab, translate

pytestmark = [pytest.mark.browser, needs_chromium]

# -> [[what the control says, where it stands]] for every visible control whose nearest named ancestor is none
LOOSE_CONTROLS = """() => {
  const controls = document.querySelectorAll(
    'button, input:not([type=hidden]), select, textarea, [role=button], [role=listbox], [role=slider]');
  const loose = [];
  for (const control of controls) {
    if (control.closest('footer, .toast-wrap, .modebar')) continue;  // Gradio's frame, Plotly's toolbar
    const box = control.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || getComputedStyle(control).visibility === 'hidden') continue;
    let named = null;
    for (let node = control; node && node !== document.body; node = node.parentElement) {
      if (node.id && !/^component-\\d+$/.test(node.id) && node.id !== 'root') { named = node.id; break; }
    }
    if (named === null) {
      loose.push([(control.innerText || control.getAttribute('aria-label') || control.type || '').trim(),
                  control.closest('[id]') ? control.closest('[id]').id : '']);
    }
  }
  return loose;
}"""


@pytest.mark.parametrize("width, height, theme", [(1280, 720, "light"), (390, 844, "dark")])
def test_every_visible_control_stands_in_a_named_part_of_the_page(browser, server, width, height, theme):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(server + f"?__theme={theme}")
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        translate(page, GERMAN)
        show_tab(page, "Next token")
        loose = {}
        for name in TABS:
            show_tab(page, name)
            page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
            found = page.evaluate(LOOSE_CONTROLS)
            if found:
                loose[name] = found
        assert not loose, f"visible controls outside every view: {loose}"
    finally:
        page.close()
