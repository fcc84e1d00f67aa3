"""The layout check of a screen: every drawn Plotly figure on it, measured from its SVG as the visitor's browser drew
it, and a screenshot of the screen kept for the run (tests/browser/test_browser_layout.py and the phone figures'
checks share the measure).

A figure's texts are its tick labels, titles, notes, annotations, colour-bar and legend labels (not a heatmap's
text in its cells, which the page cuts to its cell, nor the hover and the toolbar's own), each as the box of its ink
turned with it (a 45° label is a turned box): its line of type from the tallest glyph to the deepest (a text of
several lines, a title broken to fit, keeps its lines' boxes). A figure is clean when
- no two texts overlap by more than OVERLAP_PX;
- no text reaches past the figure's box, left, right, above or below (cut by it);
- no text lies under the toolbar (Plotly's mode bar, always shown);
- no colour bar or legend lies over a heatmap's cells;
and every control on the screen has a name of its own (a label, or its own text).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

OVERLAP_PX = 1  # two texts, or a colour bar and cells, may share this much (antialiasing, a line box's rounding)
# where the screenshots of a run go (scripts/test.sh keeps them as the run's artifacts)
SCREENSHOTS = Path(
    os.environ.get("SCREENSHOTS_DIR", Path(__file__).resolve().parents[2] / "test-artifacts" / "screens")
)

# one figure (the graph div `g`) -> its texts, the pairs that overlap and by how much (the least overlap along the
# boxes' sides: two convex shapes overlap iff they do along every one of these directions), the texts past the
# figure's box, the texts under the mode bar, the colour bars and legends over cells, and each heatmap panel's cells
# against the height its domain gives it (Plotly keeps that domain as `_inputDomain` where square cells shrink it)
MEASURE_FIGURE = """(g) => {
  const block = g.closest('.block') || g.parentElement;
  const box = block.getBoundingClientRect(), own = g.getBoundingClientRect();
  // a text's box is its line's box (the font's ascent and descent) cut to its ink: the font's ascent above the
  // tallest glyph of the text and its descent below the deepest are empty (canvas measureText of the same font)
  const measure = (window.__layoutCanvas = window.__layoutCanvas || document.createElement('canvas')).getContext('2d');
  const inked = (t, b) => {
    const style = getComputedStyle(t);
    measure.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const m = measure.measureText(t.textContent), line = m.fontBoundingBoxAscent + m.fontBoundingBoxDescent;
    if (!line || (t.querySelectorAll('tspan.line').length > 1)) return b;  // lines of a title: their line boxes
    const scale = b.height / line, top = Math.max(m.fontBoundingBoxAscent - m.actualBoundingBoxAscent, 0) * scale;
    const bottom = Math.max(m.fontBoundingBoxDescent - m.actualBoundingBoxDescent, 0) * scale;
    return {x: b.x, width: b.width, y: b.y + top, height: Math.max(b.height - top - bottom, 1)};
  };
  const corners = (t) => { const b = inked(t, t.getBBox()), m = t.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
  const shown = (t) => { for (let e = t; e && e !== g; e = e.parentElement) {
    const style = getComputedStyle(e);
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false; }
    return true; };
  const texts = Array.from(g.querySelectorAll('text'))
    .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width && shown(t)
                   && !t.closest('.hoverlayer, .modebar, .heatmaplayer'))
    .map((t) => ({text: t.textContent.trim().slice(0, 40), box: corners(t)}));
  const depth = (p, q) => { let least = Infinity;
    for (const shape of [p, q]) for (let i = 0; i < 4; i++) {
      const [x1, y1] = shape[i], [x2, y2] = shape[(i + 1) % 4], length = Math.hypot(x2 - x1, y2 - y1);
      if (!length) continue;
      const along = (points) => points.map(([x, y]) => ((y1 - y2) * x + (x2 - x1) * y) / length);
      const a = along(p), b = along(q);
      least = Math.min(least, Math.min(Math.max(...a), Math.max(...b)) - Math.max(Math.min(...a), Math.min(...b)));
    }
    return least; };
  const round = (value) => Math.round(value * 10) / 10;
  const overlaps = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    const shared = depth(a.box, b.box);
    if (shared > 0) overlaps.push([a.text, b.text, round(shared)]);
  }));
  const bounds = (c) => ({left: Math.min(...c.map(([x]) => x)), right: Math.max(...c.map(([x]) => x)),
                          top: Math.min(...c.map(([, y]) => y)), bottom: Math.max(...c.map(([, y]) => y))});
  const rect = (element) => { const r = element.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const shared = (a, b) => Math.min(Math.min(a.right, b.right) - Math.max(a.left, b.left),
                                    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  // cut: past the box across (the box is what the page shows; a figure wider than it scrolls inside it, so across
  // the figure's own width counts), past the figure's own height up or down
  const across = {left: Math.min(box.left, own.left), right: Math.max(box.right, own.right)};
  const outside = texts.map(({text, box: c}) => [text, bounds(c)])
    .filter(([, b]) => b.left < across.left - 0.5 || b.right > across.right + 0.5
                       || b.top < own.top - 0.5 || b.bottom > own.bottom + 0.5)
    .map(([text, b]) => [text, Math.round(b.left), Math.round(b.right), Math.round(b.top), Math.round(b.bottom)]);
  const bar = g.querySelector('.modebar');
  const barRect = bar && shown(bar) && bar.getBoundingClientRect().width ? rect(bar) : null;
  const underToolbar = barRect ? texts.filter(({box: c}) => shared(bounds(c), barRect) > OVERLAP).map(({text}) => text) : [];
  const cells = Array.from(g.querySelectorAll('.heatmaplayer image')).map(rect).filter((r) => r.right > r.left);
  const covers = [];
  for (const [kind, selector] of [['colour bar', '.colorbar'], ['legend', '.legend']]) {
    g.querySelectorAll(selector).forEach((element) => {
      if (!shown(element)) return;
      const over = rect(element);
      cells.forEach((cell, i) => { const depth = shared(over, cell);
        if (depth > OVERLAP) covers.push([kind, `cells ${i + 1}`, round(depth)]); });
    });
  }
  const plotHeight = g._fullLayout._size.h;
  const panels = Object.keys(g._fullLayout._plots).map((id) => {
    const image = g.querySelector(`.subplot.${id} .heatmaplayer image`);
    if (!image) return null;
    const axis = g._fullLayout['yaxis' + id.split('y')[1]];
    const [bottom, top] = axis._inputDomain || axis.domain;  // the layout's domain, before square cells shrink it
    const drawn = g.calcdata.find(([cell]) => cell.trace.type === 'heatmap'
                                              && cell.trace.yaxis === 'y' + id.split('y')[1]);
    return {panel: id, height: (top - bottom) * plotHeight, cells: image.getBoundingClientRect().height,
            rows: drawn ? drawn[0].z.length : 0};
  }).filter(Boolean);
  const title = g.querySelector('.gtitle');
  return {id: (g.closest('[id]') || {}).id || '', title: title ? title.textContent.slice(0, 60) : '',
          texts: texts.length, overlaps, outside, underToolbar, covers, panels, box: [box.left, box.right]};
}""".replace("OVERLAP", str(OVERLAP_PX))

MEASURE = "(id) => (%s)(document.querySelector(`#${id} .js-plotly-plot`))" % MEASURE_FIGURE
# every figure of the screen the visitor can see (in a tab or panel on show, drawn, not in a closed accordion)
MEASURE_SCREEN = (
    "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
    ".filter((g) => g._fullLayout && g.querySelector('.main-svg') && g.getClientRects().length"
    " && g.getBoundingClientRect().width > 0)"
    ".map((g) => (%s)(g))" % MEASURE_FIGURE
)


# every control the visitor can see without a name of its own (no label, aria-label, aria-labelledby, title, text of
# its own or label of its Gradio block) -> a line naming where it is
UNNAMED_CONTROLS = """() => {
  const seen = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden';
  const named = (e) => {
    const text = (value) => !!(value && value.trim());
    if (text(e.getAttribute('aria-label')) || text(e.title)) return true;
    const by = e.getAttribute('aria-labelledby');
    if (by && by.split(/\\s+/).some((id) => text(document.getElementById(id)?.textContent))) return true;
    if (e.labels && Array.from(e.labels).some((label) => text(label.textContent))) return true;
    if (text(e.closest('.block')?.querySelector('[data-testid="block-info"]')?.textContent)) return true;  // its block's label
    return ['BUTTON', 'A'].includes(e.tagName) || e.getAttribute('role') === 'tab' ? text(e.textContent) : false;
  };
  return Array.from(document.querySelectorAll('button, select, textarea, [role=tab], '
                                              + 'input:not([type=hidden]):not([type=file])'))
    .filter((e) => seen(e) && !e.closest('.modebar, .js-plotly-plot') && !named(e))
    .map((e) => `${e.tagName.toLowerCase()}${e.type ? '[' + e.type + ']' : ''} in #${e.closest('[id]')?.id || 'page'}`);
}"""


def problems(figure: dict) -> list[str]:
    """What is wrong with one measured figure, one line each ([] when clean)."""
    name = f"{figure['id'] or 'figure'} ({figure['title']!r})"
    found = [f"{name}: {a!r} overlaps {b!r} by {depth} px" for a, b, depth in figure["overlaps"] if depth > OVERLAP_PX]
    found += [
        f"{name}: {text!r} is cut by the figure's box (left, right, top, bottom {rest})"
        for text, *rest in figure["outside"]
    ]
    found += [f"{name}: {text!r} lies under the toolbar" for text in figure["underToolbar"]]
    found += [
        f"{name}: a {what} lies over the heatmap's {cells} by {depth} px" for what, cells, depth in figure["covers"]
    ]
    return found


def screen_name(*parts: str) -> str:
    """A screenshot's file name from what the screen is ('390x844-dark', 'Explain', 'Branch' -> 390x844-dark-explain-branch)."""
    return "-".join(re.sub(r"[^a-z0-9]+", "-", part.lower()).strip("-") for part in parts if part)


def check_screen(page, *name: str) -> tuple[int, list[str]]:
    """(how many figures the screen shows, what is wrong with them and with its controls: a control without a name
    of its own); a screenshot of the whole page is kept as SCREENSHOTS/<name>.png, and a line of what was checked
    in SCREENSHOTS/screens.jsonl (python3 -m scripts.layout_tally sums them)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{screen_name(*name)}.png"), full_page=True)
    figures = page.evaluate(MEASURE_SCREEN)
    unnamed = [f"a control without a label: {where}" for where in page.evaluate(UNNAMED_CONTROLS)]
    found = [line for figure in figures for line in problems(figure)] + unnamed
    with (SCREENSHOTS / "screens.jsonl").open("a", encoding="utf-8") as record:  # the run's tally of what it checked
        record.write(json.dumps({"screen": screen_name(*name), "figures": len(figures), "problems": len(found)}) + "\n")
    return len(figures), found
