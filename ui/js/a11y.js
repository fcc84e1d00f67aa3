/* The page for a screen reader and a keyboard (loaded by ui/page_script.py; docs/accessibility.md).

Figures: every drawn figure (the `figure-drawn` event of ui/js/figures.js) is an image named by its title (its
drawing, Plotly's first SVG: role="img", aria-label; the toolbar's buttons stay buttons) and described by a visually hidden text written from the figure's own data
(aria-describedby): for a heatmap, each row's strongest columns and their values (the rows the figure shows, the
outlined one, the step's query, said first); for bars, the largest bars with their labels and values. The text is
read from the spec the figure was drawn from, so it says what the figure shows at this step.

Choices: Up/Down pick the previous/next choice of a radio group (a head, a layer, a kind).

Step: a polite live region in the player bar (#step-announce) says the step line's step, query, chosen token and
its facts whenever the step line (#step-info) changes.

Gradio's markup: the level-one heading is the app's name in the introduction (role="heading"); an empty figure box
labelled "Empty value" is an image (an aria-label needs a role); a box that scrolls and holds nothing focusable (the
player bar's token strip, a wide table, a wide figure) takes the focus (tabindex="0", a region named by its title),
so the keyboard can scroll it.
*/
/* exported installA11y */

function installA11y(options) {
  const TOP_COLUMNS = options.topColumns;  // a heatmap row: its strongest columns
  const TOP_BARS = options.topBars;  // a bar chart: its largest bars
  const MAX_ROWS = options.maxRows;  // a heatmap's rows said, from the outlined one on
  const HIDDEN = 'a11y-hidden';  // style.css: visually hidden, read by a screen reader

  // ---- a figure's text, from the spec it was drawn from ----
  const TYPED = {i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array,
                 f4: Float32Array, f8: Float64Array};
  // a list, or Plotly's packed binary ({dtype, bdata, shape "r, c"}) as nested lists
  const values = (value) => {
    if (Array.isArray(value)) return value;
    if (ArrayBuffer.isView(value)) return Array.from(value);
    if (!value || typeof value.bdata !== 'string' || !TYPED[value.dtype]) return [];
    const bytes = Uint8Array.from(atob(value.bdata), (c) => c.charCodeAt(0));
    const flat = Array.from(new TYPED[value.dtype](bytes.buffer));
    const shape = String(value.shape || flat.length).split(',').map(Number);
    if (shape.length < 2) return flat;
    return Array.from({length: shape[0]}, (_, row) => flat.slice(row * shape[1], (row + 1) * shape[1]));
  };
  const plain = (text) => {
    const box = document.createElement('div');
    box.innerHTML = String(text ?? '').replace(/<br\s*\/?>/gi, ' ');
    return box.textContent.replace(/\s+/g, ' ').trim();
  };
  const number = (value) => Number(value).toFixed(3);
  const titleOf = (layout) => plain(layout && layout.title && (layout.title.text ?? layout.title));
  const axisOf = (layout, trace, letter) => (layout || {})[`${letter}axis${(trace[`${letter}axis`] || letter).slice(1)}`] || {};
  // a category position's name: the trace's own labels, else the axis's tick text at that value
  const label = (labels, axis, index) => {
    if (labels && labels[index] !== undefined && typeof labels[index] === 'string') return plain(labels[index]);
    const position = labels && labels[index] !== undefined ? labels[index] : index;
    const ticks = values(axis.tickvals), text = axis.ticktext || [];
    const at = ticks.findIndex((tick) => Number(tick) === Number(position));
    return at >= 0 && text[at] !== undefined ? plain(text[at]) : String(position);
  };
  const outlinedRow = (layout, trace) => {
    const ref = trace.yaxis || 'y';
    const shape = ((layout && layout.shapes) || []).find((item) => item && item.name === 'highlight' && (item.yref || 'y') === ref);
    return shape ? Math.round((shape.y0 + shape.y1) / 2) : null;
  };
  const describeHeatmap = (trace, layout) => {
    const z = values(trace.z), xs = values(trace.x), ys = values(trace.y);
    const xAxis = axisOf(layout, trace, 'x'), yAxis = axisOf(layout, trace, 'y');
    const marked = outlinedRow(layout, trace);
    const order = z.map((_, row) => row);
    if (marked !== null && marked >= 0 && marked < z.length) order.unshift(...order.splice(marked, 1));
    const rows = order.slice(0, MAX_ROWS).map((row) => {
      const cells = (z[row] || []).map((value, column) => [value, column])
        .filter(([value]) => value !== null && Number.isFinite(Number(value)))
        .sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, TOP_COLUMNS);
      const strongest = cells.map(([value, column]) => `${label(xs, xAxis, column)} ${number(value)}`).join(', ');
      return `${row === marked ? 'outlined row ' : ''}${label(ys, yAxis, row)}: ${strongest || 'no values'}.`;
    });
    const more = z.length > MAX_ROWS ? ` ${z.length - MAX_ROWS} more rows.` : '';
    return `${plain(trace.name) || 'Heatmap'}, ${z.length} rows, strongest columns per row: ${rows.join(' ')}${more}`;
  };
  const describeBars = (trace, layout) => {
    const across = trace.orientation === 'h';
    const lengths = values(across ? trace.x : trace.y), positions = values(across ? trace.y : trace.x);
    const axis = axisOf(layout, trace, across ? 'y' : 'x');
    const custom = Array.isArray(trace.customdata) ? trace.customdata : null;
    const named = (i) => (custom && Array.isArray(custom[i]) && typeof custom[i][0] === 'string'
      ? plain(custom[i][0]) : label(positions, axis, i));
    const bars = lengths.map((value, i) => [Number(value), i]).filter(([value]) => Number.isFinite(value))
      .sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, TOP_BARS);
    const listed = bars.map(([value, i]) => `${named(i)} ${number(value)}`).join(', ');
    return `${plain(trace.name) || 'Bars'}, largest ${bars.length} of ${lengths.length}: ${listed}.`;
  };
  const describeTrace = (trace, layout) => {
    if (trace.type === 'heatmap') return describeHeatmap(trace, layout);
    if (trace.type === 'bar') return describeBars(trace, layout);
    const points = values(trace.x).length || values(trace.y).length;
    return `${plain(trace.name) || trace.type || 'trace'}: ${points} points.`;
  };
  // the figure's text: its title, then each trace that shows (a legend-only trace aside)
  const describe = (figure) => {
    const shown = (figure.data || []).filter((trace) => trace && trace.visible !== false && trace.visible !== 'legendonly');
    const title = titleOf(figure.layout);
    return [title ? `${title}.` : '', ...shown.map((trace) => describeTrace(trace, figure.layout))].filter(Boolean).join(' ');
  };
  let described = 0;
  document.addEventListener('figure-drawn', (event) => {
    const plot = event.target;
    const figure = plot && plot.__lightFigure;
    if (!figure) return;
    const box = plot.closest('.block') || plot.parentElement;
    if (!plot.dataset.descriptionId) plot.dataset.descriptionId = `${box.id || 'figure'}-description-${++described}`;
    let text = document.getElementById(plot.dataset.descriptionId);
    if (!text) {
      text = document.createElement('div');
      text.id = plot.dataset.descriptionId;
      text.className = `${HIDDEN} figure-description`;
      box.appendChild(text);
    }
    text.textContent = describe(figure);
    // the drawing (Plotly's first SVG) is the image; its toolbar's buttons beside it stay buttons
    const [drawing, ...layers] = plot.querySelectorAll('svg.main-svg');
    if (!drawing) return;
    drawing.setAttribute('role', 'img');
    drawing.setAttribute('aria-label', titleOf(figure.layout) || 'figure');
    drawing.setAttribute('aria-describedby', text.id);
    layers.forEach((layer) => layer.setAttribute('aria-hidden', 'true'));  // the hover labels' layer
  });

  // ---- the step, said as it changes ----
  const bar = document.getElementById('player-bar');
  const announce = document.createElement('div');
  announce.id = 'step-announce';
  announce.className = HIDDEN;
  announce.setAttribute('role', 'status');
  announce.setAttribute('aria-live', 'polite');
  (bar || document.body).appendChild(announce);
  const stepText = () => {
    const info = document.getElementById('step-info');
    const line = info && info.querySelector('.step-line');
    if (!line) return info ? plain(info.textContent) : '';
    const part = (selector) => plain((line.querySelector(selector) || {}).textContent || '');
    return `${part('.label')}: query ${part('.tok.query')}, next token ${part('.tok.chosen')}` +
           `${part('.step-facts') ? `, ${part('.step-facts')}` : ''}.`;
  };
  const sayStep = () => {
    const text = stepText();
    if (text && announce.textContent !== text) announce.textContent = text;
  };

  // ---- choices by keys: Up/Down pick the previous/next choice of a group (Gradio gives each radio its own name,
  // so the browser's arrows move nothing; Left/Right step, ui/js/keys.js), Space picks the focused one ----
  document.addEventListener('keydown', (event) => {
    const radio = event.target instanceof Element && event.target.closest('input[type=radio]');
    if (!radio || !['ArrowUp', 'ArrowDown'].includes(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
    const group = Array.from((radio.closest('.wrap') || radio.parentElement).querySelectorAll('input[type=radio]'))
      .filter((input) => !input.disabled);
    const next = group[(group.indexOf(radio) + (event.key === 'ArrowDown' ? 1 : group.length - 1)) % group.length];
    event.preventDefault();
    if (!next || next === radio) return;
    next.focus();
    next.click();
  });

  // ---- Gradio's markup: a heading, empty figure boxes, boxes that scroll ----
  const SCROLLERS = '.step-prefix, .compare-looks, .gradio-container .prose table, .figure-scroller, .beam-table';
  const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';
  const scrolls = (element) => {
    const style = getComputedStyle(element);
    return (element.scrollWidth > element.clientWidth + 1 && /auto|scroll/.test(style.overflowX))
      || (element.scrollHeight > element.clientHeight + 1 && /auto|scroll/.test(style.overflowY));
  };
  const mend = () => {
    const name = document.querySelector('#intro strong');
    if (name && !name.hasAttribute('role')) { name.setAttribute('role', 'heading'); name.setAttribute('aria-level', '1'); }
    document.querySelectorAll('div.empty[aria-label]:not([role])').forEach((box) => box.setAttribute('role', 'img'));
    document.querySelectorAll(SCROLLERS).forEach((box) => {
      if (box.hasAttribute('tabindex') || !scrolls(box) || box.querySelector(FOCUSABLE)) return;
      box.setAttribute('tabindex', '0');
      if (!box.hasAttribute('role')) box.setAttribute('role', 'region');
      if (!box.hasAttribute('aria-label')) box.setAttribute('aria-label', box.title || 'scrolls sideways');
    });
    sayStep();
  };
  // while Gradio builds the page (thousands of changes) at most one mend per MEND_MS, after the page has changed: the
  // checks of what scrolls (a style and a layout read each) would otherwise hold up its first figure; once a figure
  // is drawn, one mend in the frame after a change (a run's new step line scrolls at once: a reader, or axe, that
  // comes when the run has settled finds its strip focusable, not 150 ms later)
  const MEND_MS = 150;
  let queued = false, built = false;
  const run = () => { queued = false; mend(); };
  const soon = () => {
    if (queued) return;
    queued = true;
    if (built) requestAnimationFrame(run); else setTimeout(run, MEND_MS);
  };
  new MutationObserver(soon).observe(document.body, {childList: true, subtree: true, characterData: true});
  window.addEventListener('resize', soon);
  document.addEventListener('figure-drawn', () => { built = true; soon(); });
  soon();
}
