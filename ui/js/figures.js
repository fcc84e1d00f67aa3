/* Figures drawn in the page's theme and fitted to their boxes (loaded by ui/page_script.py).

Widths: a figure's width is what its labels need at projector size: where its box is wider it fills the box;
where narrower it takes the box's width, on a phone in the narrow layout the figure carries (`layout.meta.narrow`:
stacked panels, smaller margins), and with the labels across thinned to stay apart, so nothing scrolls sideways.
A figure still wider than its box (a very long sentence) scrolls in its box with a cue, its row labels kept in
view on a halo.

Titles: a figure's title wider than the figure's box (on a phone) is broken into lines that fit, with the
top margin grown to hold them, so it is not cut off where the figure scrolls sideways.

Theme: Gradio puts the class `dark` on <body> for `?__theme=dark` and for a dark OS preference. Every
figure function draws one light spec; `Plotly.react`/`newPlot` (what gr.Plot calls) are wrapped so that on a
dark page the light colours and scales are swapped for the dark ones of `visualizer.theme.dark_theme()` (the
`theme` argument: one source of truth) before drawing, and the figures are redrawn when the theme changes; the
figures' boxes take the same dark background (a CSS variable).
*/
/* exported installFigures */

function installFigures(theme, phonePx) {
  const isDark = () => document.body.classList.contains('dark');
  const COLOR_KEY = /color|colorscale/i;
  const recolor = (value) => {
    if (typeof value === 'string') {
      const dark = theme.colors[value.toLowerCase().replace(/\s+/g, '')];
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
  // every figure takes its box's width (cells grow or shrink), with the layout a phone's box needs where the
  // figure carries one (`meta.narrow`: panels stacked, smaller margins; its `traces`, one patch per trace, e.g. a
  // colour bar laid across), projector type on a wide screen (PROJECTOR_PX at least for the labels across, the
  // axis titles and the colour bars), and the token labels of each axis thinned to every k-th so they stay apart
  // (a grid of small panels: as many as its cells hold, cellLabels; the hover names every cell)
  const NARROW_PX = phonePx;  // a box this narrow (a phone) takes the figure's narrow layout; a window this wide is a screen
  const PROJECTOR_PX = 14;  // the smallest text in a figure on a wide screen (a projector)
  const boxOf = (element) => element && (element.closest('.block') || element.parentElement);
  const fitFigure = (element, data, layout) => {
    const box = boxOf(element);
    if (element) element.__fittedWidth = (box && box.clientWidth) || 0;  // refitted when its box's width changes
    if (!layout || !box || !box.clientWidth) return [data, layout];
    const boxWidth = box.clientWidth - 4;
    const {traces, ...narrow} = (boxWidth < NARROW_PX && layout.meta && layout.meta.narrow) || {};
    const {width, ...rest} = merged(layout, narrow);
    const wide = window.innerWidth >= NARROW_PX;
    const fitted = rest.meta && rest.meta.cells
      ? (wide ? projectorLayout : (same) => same)(cellLabels(rest, boxWidth, wide))
      : (wide ? thinned(projectorRows(projectorLayout(rest)), boxWidth) : thinnedRows(thinned(rest, boxWidth), boxWidth));
    fitted.autosize = true;
    if (traces) data = data.map((trace, i) => merged(trace, traces[i]));
    return [cellText(wide ? data.map(projectorTrace) : data, fitted, boxWidth, wide), fitted];
  };
  const merged = (base, extra) => {
    const out = {...base};
    for (const [key, value] of Object.entries(extra || {})) {
      out[key] = value && typeof value === 'object' && !Array.isArray(value) && base[key] && typeof base[key] === 'object'
        ? merged(base[key], value) : value;
    }
    return out;
  };
  // a figure's plot width in a box, an axis's share of it, and an axis naming every k-th of its ticks
  const plotWidthOf = (layout, boxWidth) => {
    const margin = layout.margin || {};
    return Math.max(boxWidth - (margin.l ?? 80) - (margin.r ?? 80), 40);
  };
  const span = (axis) => { const [low, high] = (axis && axis.domain) || [0, 1]; return high - low; };
  const keptTicks = (axis, values, keep) => ({...axis, tickvals: values.filter((_, i) => keep(i)),
                                              ticktext: axis.ticktext.filter((_, i) => keep(i))});
  const everyKth = (axis, values, every) => keptTicks(axis, values, (i) => i % every === 0);
  const atLeast = (font, size = 12) => ({...(font || {}), size: Math.max((font && font.size) || size, PROJECTOR_PX)});
  const AXIS = /^[xy]axis\d*$/;
  // the labels across (thinned to fit below), numbers and categories down, the axis titles, the colour bars, the
  // legend and the notes (token rows: projectorRows; a grid's token labels: cellLabels; a cell's text: cellText)
  const projectorLayout = (layout) => {
    const out = {...layout, font: atLeast(layout.font)};
    if (out.legend) out.legend = {...out.legend, font: atLeast(out.legend.font)};
    if (Array.isArray(out.annotations)) out.annotations = out.annotations.map((note) => ({...note, font: atLeast(note.font)}));
    for (const key of Object.keys(out).filter((name) => AXIS.test(name))) {
      const axis = out[key] || {}, title = axis.title;
      // token rows: projectorRows; a grid's token labels: cellLabels
      const lifted = !Array.isArray(axis.ticktext) || (key[0] === 'x' && !(out.meta && out.meta.cells));
      out[key] = {...axis, ...(lifted ? {tickfont: atLeast(axis.tickfont, out.font.size)} : {}),
                  ...(title && typeof title === 'object' ? {title: {...title, font: atLeast(title.font)}} : {})};
    }
    for (const key of Object.keys(out).filter((name) => /^coloraxis\d*$/.test(name) && out[name].colorbar)) {
      out[key] = {...out[key], colorbar: projectorTrace(out[key]).colorbar};
    }
    return out;
  };
  // the row labels in projector type too: a figure whose rows would be shorter than ROW_PX grows (up to
  // ROWS_MAX_PX of rows) and its left margin with its labels; where it cannot (rows beyond that, cells kept
  // square) its labels are every k-th (the hover names every row)
  const ROW_PX = 16, ROWS_MAX_PX = 720, LABEL_PAD_PX = 40, LEFT_MAX_PX = 300;  // visualizer.heatmap's pad
  // an axis's rows: its labels, or the rows its labelled positions span where only some rows are named (the
  // positional encoding's tokens, then every 8th position); thinned, the labels on every k-th row are kept
  const rowsOf = (axis, values = numbers(axis.tickvals)) => (values && values.length
    ? Math.max(axis.ticktext.length, Math.max(...values) - Math.min(...values) + 1) : axis.ticktext.length);
  // thinned, the row the figure outlines on that axis (visualizer.heatmap.highlight_rows: the step's query) is
  // always named, its neighbours closer than k rows left out
  const everyKthRow = (axis, values, every, marked = null) => keptTicks(axis, values, (i) => (marked === null
    ? Math.round(values[i] - values[0]) % every === 0
    : Math.abs(values[i] - marked) < 0.5
      || (Math.round(values[i] - values[0]) % every === 0 && Math.abs(values[i] - marked) >= every)));
  const markedRow = (layout, name) => {  // yaxis4 -> the row outlined in a panel drawn against y4, or null
    const ref = 'y' + name.slice(5);
    const outline = (layout.shapes || []).find((shape) => shape && shape.name === 'highlight' && (shape.yref || 'y') === ref);
    return outline ? (outline.y0 + outline.y1) / 2 : null;
  };
  const projectorRows = (layout) => {
    const out = {...layout}, margin = out.margin || {};
    const plot = (out.height || 450) - (margin.t ?? 100) - (margin.b ?? 80);
    const squares = new Set(Object.values(out).map((axis) => axis && axis.scaleanchor).filter(Boolean));
    const rows = Object.keys(out).filter((name) => /^yaxis\d*$/.test(name) && out[name] && Array.isArray(out[name].ticktext)
                                                   && ((out[name].tickfont && out[name].tickfont.size) || 12) < PROJECTOR_PX);
    const grows = (name) => out.height && !out[name].scaleanchor && !squares.has(name.replace('axis', ''));
    const needed = Math.max(plot, ...rows.filter(grows).map((name) => ROW_PX * rowsOf(out[name]) / span(out[name])));
    const grown = Math.min(needed, Math.max(plot, ROWS_MAX_PX));
    if (grown > plot) out.height += grown - plot;
    let left = margin.l ?? 80;
    for (const name of rows) {
      const axis = out[name], values = numbers(axis.tickvals), font = (axis.tickfont && axis.tickfont.size) || 12;
      const every = Math.ceil(ROW_PX * rowsOf(axis, values) / (grown * span(axis)));
      const named = values && every > 1 ? everyKthRow(axis, values, every, markedRow(out, name)) : axis;
      out[name] = {...named, tickfont: atLeast(axis.tickfont)};
      left = Math.max(left, LABEL_PAD_PX + ((margin.l ?? 80) - LABEL_PAD_PX) * PROJECTOR_PX / font);  // wider labels
    }
    if (rows.length) out.margin = {...margin, l: Math.round(Math.min(left, LEFT_MAX_PX))};
    return out;
  };
  const projectorTrace = (trace) => {
    const out = trace.colorbar ? {...trace, colorbar: {...trace.colorbar, tickfont: atLeast(trace.colorbar.tickfont)}} : trace;
    // a bar's numbers, and the tokens and weights written beside points (the lines view) in projector type
    const written = out.text && (out.type === 'bar' || (out.type === 'scatter' && /text/.test(out.mode || '')));
    return written && !Array.isArray(out.textfont && out.textfont.size) ? {...out, textfont: atLeast(out.textfont)} : out;
  };
  // a heatmap's text in its cells: at the largest size its cells hold up to PROJECTOR_PX on a wide screen (the
  // figure's own size on a phone); where even the figure's own size is too big for the longest text, at that size
  // with each text cut to what its cell holds ("…"), none where that is under 3 characters (the hover names all)
  const CHAR_EM = 0.62, CELL_PAD_PX = 4;  // visualizer.heatmap's estimate of a character's width
  const units = (text) => String(text).match(/&[a-z]+;|&#x?[0-9a-f]+;|./gi) || [];  // an entity is one character
  const cellText = (data, layout, boxWidth, wide) => data.map((trace) => {
    if (trace.type !== 'heatmap' || !trace.texttemplate || !Array.isArray(trace.text)) return trace;
    const axis = layout['xaxis' + (trace.xaxis || 'x').slice(1)], nested = Array.isArray(trace.text[0]);
    const rows = nested ? trace.text : [trace.text];
    const cell = plotWidthOf(layout, boxWidth) * span(axis) / Math.max(rows[0].length, 1) - CELL_PAD_PX;
    const longest = Math.max(1, ...rows.flat().map((text) => units(text).length));
    const own = (trace.textfont && trace.textfont.size) || 12;
    const size = Math.min(wide ? Math.max(own, PROJECTOR_PX) : own, Math.floor(cell / (CHAR_EM * longest)));
    if (size >= own) return {...trace, textfont: {...(trace.textfont || {}), size}};
    const room = Math.floor(cell / (CHAR_EM * own));
    const cut = rows.map((row) => row.map((text) => {
      const chars = units(text);
      return chars.length <= room ? text : room >= 3 ? chars.slice(0, room - 1).join('') + '…' : '';
    }));
    return {...trace, text: nested ? cut : cut[0]};
  });
  // an array as the figure's JSON holds it: a list, or Plotly's packed binary ({dtype, bdata}, one axis)
  const TYPED = {i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array,
                 f4: Float32Array, f8: Float64Array};
  const numbers = (value) => {
    if (Array.isArray(value)) return value;
    if (!value || typeof value.bdata !== 'string' || !TYPED[value.dtype]) return null;
    const bytes = Uint8Array.from(atob(value.bdata), (c) => c.charCodeAt(0));
    return Array.from(new TYPED[value.dtype](bytes.buffer));
  };
  // the token labels across each axis, every k-th where the figure at `boxWidth` gives them less room than their
  // font needs (a slanted label: font / sin 45°)
  const LABEL_EM = 1.25;  // visualizer.heatmap.LABEL_LINE_EM: labels a line's height (1.2 em) and a gap apart
  const thinned = (layout, boxWidth) => {
    const out = {...layout}, plotWidth = plotWidthOf(layout, boxWidth);
    for (const key of Object.keys(out).filter((name) => /^xaxis\d*$/.test(name))) {
      const axis = out[key], values = axis && numbers(axis.tickvals);
      if (!values || !Array.isArray(axis.ticktext)) continue;
      const font = (axis.tickfont && axis.tickfont.size) || 12;
      const pitch = axis.tickangle && axis.tickangle % 90 ? 1.45 * font : font + 2;
      const every = Math.ceil(pitch * values.length / Math.max(plotWidth * span(axis), 1));
      if (every > 1) out[key] = everyKth(axis, values, every);
    }
    return out;
  };
  // on a phone, the token rows down every k-th where a row is shorter than its label's line (the outlined row, the
  // step's query, always named): a long sentence's rows there are under a line of type (a projector's rows grow
  // instead, projectorRows)
  const thinnedRows = (layout, boxWidth) => {
    const out = {...layout}, plotWidth = plotWidthOf(layout, boxWidth);
    const margin = out.margin || {}, plotHeight = (out.height || 450) - (margin.t ?? 100) - (margin.b ?? 80);
    for (const key of Object.keys(out).filter((name) => /^yaxis\d*$/.test(name))) {
      const axis = out[key], values = axis && numbers(axis.tickvals);
      if (!values || !values.length || !Array.isArray(axis.ticktext) || axis.showticklabels === false) continue;
      const across = out['xaxis' + key.slice(5)], square = axis.scaleanchor || (across && across.scaleanchor);
      let pitch = plotHeight * span(axis) / rowsOf(axis, values);
      if (square && across && Array.isArray(across.ticktext)) {  // square cells: the width may be what bounds them
        pitch = Math.min(pitch, plotWidth * span(across) / Math.max(rowsOf(across), 1));
      }
      const font = (axis.tickfont && axis.tickfont.size) || 12;
      const every = Math.ceil(LABEL_EM * font / Math.max(pitch, 1));
      if (every > 1) out[key] = everyKthRow(axis, values, every, markedRow(out, key));
    }
    return out;
  };
  // a figure of small panels that carries every token's label (`meta.cells`: the all-heads grid) named at its drawn
  // cells: each axis's labels as large as its cells hold, from its own size (PROJECTOR_PX in a wide window) up to
  // PROJECTOR_PX, the margins grown with them (the rows first: their labels take width from the columns); where
  // even the smallest size does not fit a label per cell, as many as stand LABEL_EM apart: first the row the figure
  // outlines (the step's query) and the positions `meta.cells.keep` names (the tokens the Compare tab names), then
  // the others in order wherever they fit, so no token is left out that would fit (the hover names every cell).
  // Where two of those always named stand closer than their labels, the axis's type shrinks until they part (down to
  // MIN_PX; below that the first named wins)
  const MIN_PX = 10;  // visualizer.heatmap.MIN_FONT: the smallest tick label of a token figure
  const closest = (positions) => Math.min(Infinity, ...positions.flatMap((i, n) => positions.slice(n + 1)
    .map((j) => Math.abs(i - j))));
  const spaced = (texts, pitch, need, first) => {
    const chosen = [];
    const fits = (i) => i >= 0 && i < texts.length && String(texts[i]).trim() && !chosen.includes(i)
      && chosen.every((j) => Math.abs(i - j) * pitch >= need - 0.01);
    for (const i of [...first, ...texts.keys()]) if (fits(i)) chosen.push(i);
    return chosen.sort((a, b) => a - b);
  };
  const cellLabels = (layout, boxWidth, wide) => {
    const out = {...layout}, keep = layout.meta.cells.keep || {};
    for (const letter of ['y', 'x']) {
      const margin = {...(out.margin || {})};
      const names = Object.keys(out).filter((name) => AXIS.test(name) && name[0] === letter && out[name]
                                                      && Array.isArray(out[name].ticktext) && out[name].showticklabels);
      const across = letter === 'x' ? plotWidthOf(out, boxWidth)
        : (out.height || 450) - (margin.t ?? 100) - (margin.b ?? 80);
      let grown = 0;
      for (const name of names) {
        const axis = out[name], values = numbers(axis.tickvals) || [], own = (axis.tickfont && axis.tickfont.size) || 12;
        const pitch = across * span(axis) / Math.max(axis.ticktext.length, 1);
        const marked = letter === 'y' ? markedRow(out, name) : null;
        const first = [...new Set([marked, ...(keep[letter] || [])].filter((v) => v !== null)
          .map((v) => values.indexOf(Math.round(v))))].filter((i) => i >= 0 && String(axis.ticktext[i]).trim());
        const fitted = Math.max(wide ? PROJECTOR_PX : own, Math.min(PROJECTOR_PX, Math.floor(pitch / LABEL_EM)));
        const size = Math.max(MIN_PX, Math.min(fitted, Math.floor(closest(first) * pitch / LABEL_EM)));
        const shown = spaced(axis.ticktext, pitch, LABEL_EM * size, first);
        out[name] = {...axis, tickvals: shown.map((i) => values[i]), ticktext: shown.map((i) => axis.ticktext[i]),
                     tickfont: {...(axis.tickfont || {}), size}};
        const longest = Math.max(0, ...shown.map((i) => units(axis.ticktext[i]).length));
        grown = Math.max(grown, Math.ceil(CHAR_EM * longest * (size - own)));
      }
      if (letter === 'y') out.margin = {...margin, l: (margin.l ?? 80) + grown};
      else if (grown) [out.margin, out.height] = [{...margin, b: (margin.b ?? 80) + grown}, (out.height || 450) + grown];
    }
    return out;
  };
  // the element that scrolls a figure sideways (its box or a wrapper inside it), or null
  const scrollerOf = (element) => {
    const inner = element && element.querySelector('.plot-container');  // Plotly's own box (style.css scrolls it)
    if (inner && inner.scrollWidth > inner.clientWidth + 2) return inner;
    for (let node = element && element.parentElement; node && node !== document.body; node = node.parentElement) {
      if (node.scrollWidth > node.clientWidth + 2 && /auto|scroll/.test(getComputedStyle(node).overflowX)) return node;
      if (node.classList.contains('block')) break;
    }
    return null;
  };
  // row labels stay in view while the figure scrolls (on a halo of the page's colour)
  const keepLabels = (scroller) => {
    scroller.querySelectorAll('.js-plotly-plot .yaxislayer-above, .js-plotly-plot .g-ytitle').forEach((layer) => {
      layer.style.transform = `translateX(${scroller.scrollLeft}px)`;
    });
    const box = boxOf(scroller);
    if (box) box.classList.toggle('scrolled-to-end', scroller.scrollLeft + scroller.clientWidth >= scroller.scrollWidth - 2);
  };
  const scrollCue = (element) => {
    const box = boxOf(element);
    if (!box) return;
    const scroller = scrollerOf(element);
    box.classList.toggle('scrolls-x', !!scroller);
    if (scroller) { scroller.classList.add('figure-scroller'); keepLabels(scroller); }
  };
  document.addEventListener('scroll', (event) => {
    const scroller = event.target;
    if (scroller instanceof Element && scroller.classList.contains('figure-scroller')) keepLabels(scroller);
  }, true);
  window.addEventListener('resize', () => document.querySelectorAll('.js-plotly-plot').forEach(scrollCue));

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
    // Plotly sets a title's first line on the middle of the top margin and the others below it: the margin grows by
    // twice the lines added, so the last line keeps the distance one line had from what lies above the plot (a
    // note, the columns' names)
    const extra = 2 * Math.round((lines.length - 1) * size * 1.3);
    const margin = {...(layout.margin || {}), t: ((layout.margin || {}).t ?? 100) + extra};
    return {...layout, margin, ...(layout.height ? {height: layout.height + extra} : {}),
            title: {...(typeof title === 'string' ? {} : title), text: lines.join(' <br>')}};
  };
  // a note above the plot (an annotation on the paper, at its top or above) wider than the figure's box is broken
  // into lines too, the top margin grown to hold them (the note grows upwards from the plot)
  const fitNotes = (element, layout) => {
    const notes = layout && layout.annotations;
    if (!Array.isArray(notes) || !element || !element.clientWidth) return layout;
    const figureWidth = Math.min(element.clientWidth, layout.width || Infinity), margin = layout.margin || {};
    const plotWidth = figureWidth - (margin.l ?? 80) - (margin.r ?? 80);
    let extra = 0;
    const fitted = notes.map((note) => {
      const text = note && note.text;
      if (!text || note.xref !== 'paper' || note.yref !== 'paper' || !(note.y >= 1) || /<br>/i.test(text)) return note;
      // the room the note has from where it is anchored (paper x: the plot's share) to the figure's edges
      const at = (margin.l ?? 80) + (note.x ?? 0.5) * plotWidth;
      const room = {left: figureWidth - at, right: at}[note.xanchor] ?? 2 * Math.min(at, figureWidth - at);
      const box = room - 12;
      const font = {...(layout.font || {}), ...(note.font || {})}, size = font.size || 12;
      measure.font = `${size}px ${font.family || '"Open Sans", verdana, arial, sans-serif'}`;
      const width = (line) => measure.measureText(line.replace(/<[^>]+>/g, '')).width;
      if (width(text) <= box) return note;
      const lines = [];
      for (const word of text.split(' ')) {
        const last = lines.length ? lines[lines.length - 1] + ' ' + word : word;
        if (lines.length && width(last) <= box) lines[lines.length - 1] = last; else lines.push(word);
      }
      extra = Math.max(extra, Math.round((lines.length - 1) * size * 1.3));
      return {...note, text: lines.join('<br>')};
    });
    if (!extra) return layout;
    return {...layout, annotations: fitted, margin: {...margin, t: (margin.t ?? 100) + extra},
            ...(layout.height ? {height: layout.height + extra} : {})};
  };
  document.documentElement.style.setProperty('--figure-dark-background', theme.background);
  // the figures being drawn now (a draw lays out its colour bars and labels after Plotly.react returns), in
  // <body data-figures-drawing>: what tests wait on before they measure a figure, never on timing
  let inFlight = 0;
  const drawing = (change) => { inFlight += change; document.body.dataset.figuresDrawing = String(inFlight); };
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
      [data, layout] = fitFigure(element, data || [], layout);
      layout = fitNotes(element, fitTitle(element, layout));
      drawing(+1);
      let drawn;
      try {
        drawn = draw.call(this, div, data, layout, config);
      } catch (error) {  // a draw that fails at once is no longer being drawn
        drawing(-1);
        throw error;
      }
      Promise.resolve(drawn).then(() => {
        scrollCue(element);
        if (element) element.dispatchEvent(new CustomEvent('figure-drawn', {bubbles: true}));  // scroll.js follows it
      }).finally(() => drawing(-1));
      return drawn;
    };
    themed.__themed = true;
    plotly[name] = themed;
  };
  // a figure Plotly drew before this script ran (the first view comes in the page's config, and Plotly, fetched
  // from the start, can draw it before the page's load event runs this script) is drawn again through the wrap:
  // in the page's theme and fitted to its box like every later one, with the config it was drawn with
  const redrawEarly = (plotly) => document.querySelectorAll('.js-plotly-plot').forEach((div) => {
    if (div.__lightFigure || !Array.isArray(div.data)) return;
    const {_context: context = {}} = div;
    const config = Object.fromEntries(Object.entries(context).filter(([key]) => !key.startsWith('_')));
    plotly.react(div, structuredClone(div.data), structuredClone(div.layout || {}), config);
  });
  const install = (plotly) => {
    if (!plotly) return;
    wrap(plotly, 'react');
    wrap(plotly, 'newPlot');
    redrawEarly(plotly);
  };
  let plotly = window.Plotly;
  install(plotly);
  Object.defineProperty(window, 'Plotly', {configurable: true, get: () => plotly,
                                           set: (value) => { plotly = value; install(value); }});
  // a figure drawn again from the light spec it was given (through the wrap: themed and fitted anew)
  const redraw = (div) => {
    const figure = div.__lightFigure;
    if (figure && plotly) plotly.react(div, structuredClone(figure.data), structuredClone(figure.layout), figure.config);
  };
  let wasDark = isDark();
  new MutationObserver(() => {
    if (isDark() === wasDark || !plotly) return;
    wasDark = isDark();
    document.querySelectorAll('.js-plotly-plot').forEach(redraw);
  }).observe(document.body, {attributes: true, attributeFilter: ['class']});
  // a figure whose box is now another width than it was fitted to (drawn while its box had no width or was still
  // settling, a window resized or a phone turned) is fitted again: its layout chosen anew (a phone's narrow one or
  // a screen's) and its labels thinned for the new width; a box hidden with its tab (no width) is left as it is
  // and shown again at the width it was fitted to (Plotly cannot scale axes in no width)
  const refit = new ResizeObserver((entries) => entries.forEach(({target}) => {
    if (!target.clientWidth) return;
    target.querySelectorAll('.js-plotly-plot').forEach((div) => {
      if (div.__lightFigure && div.__fittedWidth !== target.clientWidth) redraw(div);
    });
  }));
  document.addEventListener('figure-drawn', (event) => {
    const box = boxOf(event.target);
    if (box) refit.observe(box);
  });
}
