"""The page's one script: page-wide step keys, and figures drawn in the page's theme (light or dark).

Keys: Left/Right = Back/Next, Home/End = First/Last, Space = Play/Pause. They click the step buttons
(so they do exactly what a click does) and never fire while typing in a text box, radio or slider,
with a modifier held, or while the buttons are disabled (no trace yet).

Titles: a figure's title wider than the figure's box (on a phone) is broken into lines that fit, with the
top margin grown to hold them, so it is not cut off where the figure scrolls sideways.

Theme: Gradio puts the class `dark` on <body> for `?__theme=dark` and for a dark OS preference. Every
figure function draws one light spec; this script wraps `Plotly.react`/`newPlot` (what gr.Plot calls)
so that on a dark page the light colours and scales are swapped for the dark ones of
`visualizer.theme.dark_theme()` (passed here as JSON: one source of truth) before drawing, and redraws
the figures when the theme changes; the figures' boxes take the same dark background (a CSS variable).
"""

from __future__ import annotations

import json

from visualizer.theme import dark_theme

KEYS = {"ArrowLeft": "step-prev", "ArrowRight": "step-next", "Home": "step-first", "End": "step-last",
        " ": "play"}

_SCRIPT = """
(theme, keys) => {
  if (window.__attentionExplorer) return;
  window.__attentionExplorer = true;
  const isDark = () => document.body.classList.contains('dark');
  const COLOR_KEY = /color|colorscale/i;
  const recolor = (value) => {
    if (typeof value === 'string') {
      const dark = theme.colors[value.toLowerCase().replace(/\\s+/g, '')];
      return dark === undefined ? value : dark;
    }
    if (Array.isArray(value)) return value.map(recolor);
    if (value && typeof value === 'object') return walk(value);
    return value;
  };
  // only values under colour keys change (a token that reads "white" stays a token)
  const walk = (node) => {
    if (Array.isArray(node)) { node.forEach(walk); return node; }
    if (!node || typeof node !== 'object' || 'bdata' in node) return node;
    for (const key of Object.keys(node)) {
      if (COLOR_KEY.test(key)) node[key] = recolor(node[key]);
      else if (node[key] && typeof node[key] === 'object') walk(node[key]);
    }
    return node;
  };
  const darken = (data, layout) => {
    data = walk(structuredClone(data || []));
    layout = walk(structuredClone(layout || {}));
    layout.template = theme.template;
    layout.paper_bgcolor = theme.background;
    if (!layout.plot_bgcolor) layout.plot_bgcolor = theme.background;
    return [data, layout];
  };
  // a title wider than the figure's box (a phone; a figure that scrolls sideways) is broken into lines that fit
  const measure = document.createElement('canvas').getContext('2d');
  const fitTitle = (element, layout) => {
    const title = layout && layout.title;
    const text = typeof title === 'string' ? title : title && title.text;
    if (!text || !element || !element.clientWidth || /<br>/i.test(text)) return layout;
    const left = (typeof title.x === 'number' ? title.x : 0.05) * (layout.width || element.clientWidth);
    const box = Math.min(element.clientWidth, layout.width || Infinity) - left - 12;  // the visible part
    const font = {...(layout.font || {}), ...(title.font || {})};
    const size = (title.font && title.font.size) || 1.4 * (font.size || 12);
    measure.font = `${size}px ${font.family || '"Open Sans", verdana, arial, sans-serif'}`;
    const width = (line) => measure.measureText(line.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')).width;
    if (width(text) <= box) return layout;
    const lines = [];
    for (const word of text.split(' ')) {
      const last = lines.length ? lines[lines.length - 1] + ' ' + word : word;
      if (lines.length && width(last) <= box) lines[lines.length - 1] = last; else lines.push(word);
    }
    const extra = Math.round((lines.length - 1) * size * 1.3);
    const margin = {...(layout.margin || {}), t: ((layout.margin || {}).t ?? 100) + extra};
    return {...layout, margin, ...(layout.height ? {height: layout.height + extra} : {}),
            title: {...(typeof title === 'string' ? {} : title), text: lines.join(' <br>')}};
  };
  document.documentElement.style.setProperty('--figure-dark-background', theme.background);
  const wrap = (plotly, name) => {
    const draw = plotly[name];
    if (!draw || draw.__themed) return;
    const themed = function (div, data, layout, config) {
      const element = typeof div === 'string' ? document.getElementById(div) : div;
      if (data && !Array.isArray(data) && data.data) {  // the one-object form {data, layout, config}
        ({data, layout, config} = data);
      }
      if (element) element.__lightFigure = {data: structuredClone(data || []), layout: structuredClone(layout || {}), config};
      if (isDark()) [data, layout] = darken(data, layout);
      layout = fitTitle(element, layout);
      return draw.call(this, div, data, layout, config);
    };
    themed.__themed = true;
    plotly[name] = themed;
  };
  const install = (plotly) => { if (plotly) { wrap(plotly, 'react'); wrap(plotly, 'newPlot'); } };
  let plotly = window.Plotly;
  install(plotly);
  Object.defineProperty(window, 'Plotly', {configurable: true, get: () => plotly,
                                           set: (value) => { plotly = value; install(value); }});
  let wasDark = isDark();
  new MutationObserver(() => {
    if (isDark() === wasDark || !plotly) return;
    wasDark = isDark();
    document.querySelectorAll('.js-plotly-plot').forEach((div) => {
      const figure = div.__lightFigure;
      if (figure) plotly.react(div, structuredClone(figure.data), structuredClone(figure.layout), figure.config);
    });
  }).observe(document.body, {attributes: true, attributeFilter: ['class']});

  document.addEventListener('keydown', (event) => {
    const id = keys[event.key];
    if (!id || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const target = event.target instanceof Element ? event.target : null;
    if (target && target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], [role="tab"]')) return;
    if (event.key === ' ' && target && target.closest('button, a')) return;  // Space presses a focused button
    const button = document.getElementById(id);
    if (!button || button.disabled) return;
    event.preventDefault();
    button.click();
  });
}
"""


def page_script() -> str:
    """The JavaScript function run once when the page loads (for `demo.load(js=...)`)."""
    call = f"() => ({_SCRIPT.strip()})({json.dumps(dark_theme())}, {json.dumps(KEYS)})"
    return call
