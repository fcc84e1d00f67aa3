/* The lesson page's player (lesson/page.html): the sentences, the step player and the views of "Attention Is All
You Need" (Vaswani et al., 2017), drawn offline from the lesson's data (lesson/writer.py).

Numbers are the trace's: a view's figure is the app's own spec (lesson/figures.py); the attention heatmaps'
z are references into the exported arrays (weights (L, h, Tq, Tk) and their heads' mean (L, Tq, Tk)), resolved
here by slicing, never computed: at step t a decoder kind shows rows 0..t (and, for self-attention, keys 0..t),
the later rows blank and unnamed, row t outlined. Figures go through the app's figures.js (installFigures): the
page's theme (light, dark) and the box's width (a projector, a phone) as in the app.

The page opens where the lesson's "start" record says (lesson/start.py: the view on the app's screen when it was
downloaded; a null step is the last), with its note, if any, under the sentence.

State the tests read: <body data-step> (1-based), data-view, data-kind, data-layer (1-based), data-head (the head
button's choice: "0" is head 1, "mean", "all"), data-sentence (1-based), data-drawn (draws finished so far), data-first-figure-ms (the first draw's end, in ms
after the page's navigation started).
*/

(function lessonPlayer() {
  const LESSON = window.LESSON;
  const PLAY_MS = 700;
  const CONFIG = {displayModeBar: true, displaylogo: false, responsive: true,
                  toImageButtonOptions: {format: 'png', filename: 'lesson', scale: 2}};
  const TYPED = {f4: Float32Array, f8: Float64Array, i4: Int32Array, u1: Uint8Array, i1: Int8Array};
  const $ = (id) => document.getElementById(id);
  const START = LESSON.start;
  const state = {  // the player's own terms: 0-based, head "0" = head 1
    sentence: START.sentence - 1, step: START.step === null ? Infinity : START.step - 1, view: START.view,
    kind: START.kind, layer: START.layer - 1, head: /^\d+$/.test(START.head) ? String(START.head - 1) : START.head,
  };
  const loaded = {};  // sentence index -> its data, unpacked
  let drawn = 0, timer = null;

  // ---- data --------------------------------------------------------------------------------------------------
  const bytesOf = (base64) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const unpackSentence = async (encoded) => {
    const stream = new Blob([bytesOf(encoded)]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  };
  const loadScript = (index) => new Promise((resolve, reject) => {
    if (window.LESSON_SENTENCES && window.LESSON_SENTENCES[index] !== undefined) { resolve(); return; }
    const script = document.createElement('script');
    script.src = `data/sentence-${index + 1}.js`;
    script.onload = resolve;
    script.onerror = reject;
    document.head.appendChild(script);
  });
  const sentence = async (index) => {
    if (!loaded[index]) {
      await loadScript(index);
      loaded[index] = unpackSentence(window.LESSON_SENTENCES[index]);
    }
    return loaded[index];
  };
  // an exported array: {values (typed), shape}, decoded once
  const unpack = (packed) => {
    if (!packed.values) {
      packed.values = new TYPED[packed.dtype](bytesOf(packed.bdata).buffer);
      packed.dims = String(packed.shape).split(',').map(Number);
    }
    return packed;
  };
  // the (R, C) matrix at `index` of an exported array, rows after `rows` and keys after `keys` blank (null)
  const matrix = (packed, index, rows = Infinity, keys = Infinity) => {
    const {values, dims} = unpack(packed);
    const [R, C] = dims.slice(-2);
    let offset = 0;
    index.forEach((i, axis) => { offset = offset * dims[axis] + i; });
    offset *= R * C;
    return Array.from({length: R}, (_, r) => (r > rows ? Array(C).fill(null)
      : Array.from(values.subarray(offset + r * C, offset + (r + 1) * C), (v, c) => (c > keys ? null : v))));
  };

  // ---- figures -----------------------------------------------------------------------------------------------
  const tickValues = (axis) => {
    const values = axis.tickvals;
    if (Array.isArray(values)) return values;
    return values && values.bdata ? Array.from(new TYPED[values.dtype](bytesOf(values.bdata).buffer)) : [];
  };
  const unnamedAfter = (axis, last) => {  // tick labels of positions after `last` left empty
    const values = tickValues(axis);
    return {...axis, tickvals: values, ticktext: axis.ticktext.map((text, i) => (values[i] > last ? '' : text))};
  };
  const atStep = (figure, grows, step) => {
    const layout = figure.layout;
    for (const key of Object.keys(layout)) {
      const rows = /^yaxis\d*$/.test(key), keys = grows === 'rows+keys' && /^xaxis\d*$/.test(key);
      if ((rows || keys) && Array.isArray(layout[key].ticktext)) layout[key] = unnamedAfter(layout[key], step);
    }
    for (const shape of layout.shapes || []) {
      if (shape.name === 'highlight') { shape.y0 = step - 0.5; shape.y1 = step + 0.5; }
    }
  };
  const attentionFigure = (data) => {
    const kind = data.figures.attention[state.kind];
    const mode = state.head === 'all' || state.head === 'mean' ? state.head : 'head';
    const layer = Math.min(state.layer, data.layers[state.kind] - 1), head = Number(state.head) || 0;
    const figure = structuredClone(mode === 'all' ? kind.all[layer] : kind[mode]);
    if (mode !== 'all') {
      figure.layout.title.text = kind.titles[mode].replace('{layer}', layer + 1).replace('{head}', head + 1);
    }
    const rows = kind.grows ? state.step : Infinity, keys = kind.grows === 'rows+keys' ? state.step : Infinity;
    for (const trace of figure.data) {
      if (!trace.z || !trace.z.ref) continue;
      const index = trace.z.index.map((i) => (i === 'layer' ? layer : i === 'head' ? head : i));
      trace.z = matrix(data.arrays[trace.z.ref], index, rows, keys);
      trace.hoverongaps = false;
    }
    if (kind.grows) atStep(figure, kind.grows, state.step);
    return figure;
  };
  const viewFigure = (data) => {
    if (state.view === 'attention') return attentionFigure(data);
    const figures = data.figures[state.view];
    return structuredClone(Array.isArray(figures) ? figures[state.step] : figures);
  };

  // ---- the page ----------------------------------------------------------------------------------------------
  const choices = (box, items, pick) => {
    box.replaceChildren(...items.map(({id, label, title}) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.choice = id;
      button.textContent = label;
      if (title) button.title = title;
      button.addEventListener('click', () => pick(id));
      return button;
    }));
  };
  const pressed = (box, value) => box.querySelectorAll('button').forEach((button) => {
    button.setAttribute('aria-pressed', String(button.dataset.choice === String(value)));
  });
  const stepText = (data) => {
    const t = state.step;
    const prefix = data.target_tokens.slice(0, t + 1).join(' ');
    return `Step ${t + 1} of ${data.steps}: ${prefix} → ${data.output_tokens[t]} · entropy ${data.entropy[t].toFixed(2)} bits`;
  };
  const showText = (data) => {
    $('sentence-title').textContent = data.title;
    $('sentence-title').hidden = data.title === data.source;  // a sentence without a title of its own
    $('sentence-note').textContent = data.note;
    $('sentence-note').hidden = !data.note;
    $('source').textContent = data.source;
    $('source').lang = data.direction.slice(0, 2);
    $('translation').textContent = data.translation;
    $('translation').lang = data.direction.slice(3);
    const view = LESSON.views.find((item) => item.id === state.view);
    $('section-title').textContent = `Section ${view.section}`;
    $('section-text').textContent = view.text;
    const kind = LESSON.kinds.find((item) => item.id === state.kind);
    $('kind-text').textContent = state.view === 'attention' ? `${kind.label} (section ${kind.section}).` : '';
    $('paper-cite').textContent = LESSON.paper;
  };
  const showControls = (data) => {
    const slider = $('step-slider');
    slider.max = String(data.steps);
    slider.value = String(state.step + 1);
    $('step-text').textContent = stepText(data);
    const layers = Array.from({length: data.layers[state.kind]}, (_, l) => ({id: String(l), label: `${l + 1}`, title: `layer ${l + 1}`}));
    choices($('layer-choices'), layers, (id) => update({layer: Number(id)}));
    const heads = Array.from({length: data.heads}, (_, h) => ({id: String(h), label: `${h + 1}`, title: `head ${h + 1}`}));
    choices($('head-choices'), [...heads, {id: 'mean', label: 'mean'}, {id: 'all', label: 'all heads'}],
            (id) => update({head: id}));
    $('sentence-menu').value = String(state.sentence);
    pressed($('view-tabs'), state.view);
    pressed($('kind-choices'), state.kind);
    pressed($('layer-choices'), state.layer);
    pressed($('head-choices'), state.head);
    $('attention-controls').hidden = state.view !== 'attention';
    $('play').textContent = timer ? 'Pause' : 'Play';
    $('play').setAttribute('aria-label', timer ? 'Pause' : 'Play');
    Object.assign(document.body.dataset, {step: state.step + 1, view: state.view, kind: state.kind,
                                          layer: state.layer + 1, head: state.head, sentence: state.sentence + 1});
  };
  const draw = async () => {
    const data = await sentence(state.sentence);
    state.step = Math.max(0, Math.min(state.step, data.steps - 1));
    state.layer = Math.min(state.layer, data.layers[state.kind] - 1);
    showText(data);
    showControls(data);
    const figure = viewFigure(data);
    figure.layout.template = LESSON.template;
    await window.Plotly.react($('figure'), figure.data, figure.layout, CONFIG);
    drawn += 1;
    document.body.dataset.drawn = String(drawn);
    if (drawn === 1) document.body.dataset.firstFigureMs = String(Math.round(performance.now()));  // from navigation
  };
  let queued = Promise.resolve();
  const update = (change) => {
    Object.assign(state, change);
    queued = queued.then(draw, draw);  // draws in order, one at a time
    return queued;
  };
  const steps = () => sentence(state.sentence).then((data) => data.steps);
  const stepTo = async (step) => update({step: Math.max(0, Math.min(step, (await steps()) - 1))});
  const play = async () => {
    if (timer) { clearInterval(timer); timer = null; update({}); return; }
    if (state.step >= (await steps()) - 1) state.step = -1;
    timer = setInterval(async () => {
      if (state.step >= (await steps()) - 1) { clearInterval(timer); timer = null; update({}); return; }
      stepTo(state.step + 1);
    }, PLAY_MS);
    stepTo(state.step + 1);
  };

  const install = () => {
    $('sentence-menu').replaceChildren(...LESSON.sentences.map((item, i) => new Option(`${i + 1}. ${item.title}`, String(i))));
    $('sentence-menu').addEventListener('change', (event) => update({sentence: Number(event.target.value), step: Infinity}));
    choices($('view-tabs'), LESSON.views.map(({id, label, section}) => ({id, label, title: `Section ${section}`})),
            (id) => update({view: id}));
    choices($('kind-choices'), LESSON.kinds.map(({id, short, label}) => ({id, label: short, title: label})),
            (id) => update({kind: id}));
    $('step-first').addEventListener('click', () => stepTo(0));
    $('step-prev').addEventListener('click', () => stepTo(state.step - 1));
    $('step-next').addEventListener('click', () => stepTo(state.step + 1));
    $('step-last').addEventListener('click', () => stepTo(Infinity));
    $('play').addEventListener('click', play);
    $('step-slider').addEventListener('input', (event) => stepTo(Number(event.target.value) - 1));
    const KEYS = {ArrowLeft: () => stepTo(state.step - 1), ArrowRight: () => stepTo(state.step + 1),
                  Home: () => stepTo(0), End: () => stepTo(Infinity), ' ': play};
    document.addEventListener('keydown', (event) => {
      const action = KEYS[event.key];
      if (!action || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();  // the slider and buttons would act on the key too
      action();
    });
    document.addEventListener('keyup', (event) => {  // a focused button acts on Space's release: not a second time
      if (event.key === ' ') event.preventDefault();
    });
    const theme = $('theme-toggle');
    const setDark = (dark) => {
      document.body.classList.toggle('dark', dark);
      theme.setAttribute('aria-pressed', String(dark));
      theme.textContent = dark ? 'Light' : 'Dark';
    };
    theme.addEventListener('click', () => setDark(!document.body.classList.contains('dark')));
    const asked = new URLSearchParams(window.location.search).get('theme');
    setDark(asked ? asked === 'dark' : window.matchMedia('(prefers-color-scheme: dark)').matches);
    window.installFigures(LESSON.dark);
    $('start-note').textContent = START.note;
    $('start-note').hidden = !START.note;
    // the page opens at the start record (state); the other sentences load once the first figure is up
    update({}).then(() => LESSON.sentences.forEach((_, i) => sentence(i)));
  };
  install();
}());
