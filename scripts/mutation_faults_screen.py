"""The planted faults of scripts/mutation_check.py for the screen after Translate (the whole translation shown, one
input check a click, menus dismissed without a choice, the phone's figures), the Compare tab's plain sentence and
opening head, the lines view and the all-heads grid's labels, after VIEW_FAULTS in scripts/mutation_faults_views.py.
One exact text replacement each; `old` must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale` checks).

    python3 scripts/mutation_check.py --tests tests/ui/test_compare_view.py tests/visualizer/test_lines.py \
        tests/ui/test_lines_view.py tests/visualizer/test_visualizer_attention.py tests/ui/test_app.py \
        --only story-,compare-,lines-,grid-,pipeline-,translate-,menu-
    python3 scripts/mutation_check.py --browser --tests tests/browser/test_browser_phone_figures.py --only phone-
    python3 scripts/mutation_check.py --browser --tests tests/browser/test_browser_lecturer.py --only grid-js-
    python3 scripts/mutation_check.py --browser --tests tests/browser/test_browser_compare.py --only hidden-figure-
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

SCREEN_FAULTS = [
    # ---- caught by tests/ui/test_compare_view.py,
    # tests/visualizer/test_lines.py, tests/ui/test_lines_view.py, tests/visualizer/test_visualizer_attention.py,
    # tests/ui/test_app.py
    Fault(
        "story-threshold-lowered",
        "ui/compare_views.py",
        "        if link.strongest < LINK_WEIGHT:\n",
        "        if link.strongest < LINK_WEIGHT / 5:\n",
        "the Compare sentence says a head links 'it' to a word from a twentieth of its attention on",
    ),
    Fault(
        "story-threshold-raised",
        "ui/compare_views.py",
        "LINK_WEIGHT = 0.25  #",
        "LINK_WEIGHT = 0.5  #",
        "the Compare sentence says no head links 'it' while one sends it 0.30 or more",
    ),
    Fault(
        "story-one-piece-of-a-word",
        "model/analysis/compare.py",
        "looks.encoder_rows[..., words[key][1]].sum(-1)",
        "looks.encoder_rows[..., words[key][1][0]]",
        "a word's weight is its first subword piece's only ('anim' for 'animal')",
    ),
    Fault(
        "story-same-output-always",
        "model/analysis/compare.py",
        "return self.first.translating.output_token == self.second.translating.output_token",
        "return True",
        "the Compare summary says the model translates the token the same way in both sentences, whatever it chose",
    ),
    Fault(
        "story-second-sentence-is-the-firsts",
        "model/analysis/compare.py",
        "weights = (None if share is None else float(share[layer, head]) for share in shares)",
        "weights = (None if share is None else float(shares[0][layer, head]) for share in shares)",
        "the referent's weight said for sentence 2 is sentence 1's (the numbers side by side read the same)",
    ),
    Fault(
        "story-sentences-swapped",
        "ui/compare_views.py",
        "for value in (first, second))",
        "for value in (second, first))",
        "every pair of numbers in the Compare summary is sentence 2's then sentence 1's under 'sentence 1 / sentence 2'",
    ),
    Fault(
        "story-keys-by-weight",
        "model/analysis/compare.py",
        "return sorted(words, key=lambda word: -word.gap)",
        "return sorted(words, key=lambda word: -max(word.first or 0.0, word.second or 0.0))",
        "the words the top head 'differs most at' are those it weighs most, not those whose weights differ most",
    ),
    Fault(
        "story-same-weight-ignored",
        "ui/compare_views.py",
        "            elif abs(link.first - link.second) < SAME_WEIGHT:\n",
        "            elif False:\n",
        "the Compare summary says a head sends more in one sentence while the two weights are about the same",
    ),
    Fault(
        "compare-opens-on-the-second-head",
        "ui/compare_second.py",
        "    top = result.ranking[0]\n    return Opening(",
        "    top = result.ranking[1]\n    return Opening(",
        "the blog pair opens on the head that differs second most",
    ),
    Fault(
        "compare-figures-at-their-own-step",
        "ui/compare_views.py",
        '    step = step_index(trace, step) + 1\n    if draw != "lines":',
        '    step = step_index(trace, looks.translating.step + 1 if looks else step) + 1\n    if draw != "lines":',
        "each Compare figure is drawn at its own token's step, not the player bar's",
    ),
    Fault(
        "compare-back-keeps-the-pairs-second",
        "ui/compare.py",
        'lambda values: {c["second"]: None} if values[c["second"]] is not None else {},',
        "lambda values: {},",
        "a new first sentence (Back to your sentence, Translate) is compared at once with the second left over",
    ),
    Fault(
        "compare-alone-empty-boxes",
        "ui/compare.py",
        '                r["plot1"]: figure,\n',
        '                r["plot1"]: None,\n',
        "the Compare tab without a second sentence shows an empty figure box, not the first sentence's figure",
    ),
    Fault(
        "compare-advice-by-direction",
        "ui/compare_second.py",
        "        if written == source_language(first):\n",
        "        if True:\n",
        "a second sentence of another language is advised to be translated in the first's direction",
    ),
    Fault(
        "compare-names-subword-pieces",
        "model/analysis/compare.py",
        "row, words = np.asarray(row, dtype=np.float64), source_words(tokens, keep_special=True)",
        "row, words = np.asarray(row, dtype=np.float64), [(t, [i]) for i, t in enumerate(tokens)]",
        "the Compare summary names subword pieces ('w' of 'wide') as the words the top head differs on",
    ),
    Fault(
        "compare-follower-overrides-the-action",
        "ui/redraw.py",
        "                values = overlay(values, changes)\n",
        "                values = overlay(values, followed)\n",
        "the views are drawn from a follower's value where the action wrote its own (the blog pair drawn without its "
        "second sentence)",
    ),
    Fault(
        "lines-every-head-every-line",
        "visualizer/lines.py",
        "return (strongest_keys(keep, shown) if several else keep), None, False",
        "return keep, None, False",
        "every head of a layer draws all its lines again (a tangle)",
    ),
    Fault(
        "lines-strongest-is-the-weakest",
        "visualizer/lines.py",
        "best = np.argmax(np.where(keep, weights, -1.0), axis=-1)",
        "best = np.argmin(np.where(keep, weights, 2.0), axis=-1)",
        "each head's line per query goes to its weakest key over the threshold",
    ),
    Fault(
        "grid-rows-not-grown",
        "visualizer/head_grid.py",
        "    panel_h = max(panel_h, min(LABEL_PX * n_queries, LABELLED_PANEL_PX))",
        "    panel_h = panel_h",
        "the all-heads grid names every other query row only",
    ),
    Fault(
        "grid-columns-not-fitted",
        "visualizer/head_grid.py",
        "columns and fitted_columns(n_keys, columns)",
        "columns",
        "the all-heads grid keeps four panels a row however many keys: a projector names every other key only",
    ),
    Fault(
        "grid-named-dropped",
        "visualizer/head_grid.py",
        "    fig.layout.meta = dict(cells=cell_labels(window, named_queries, named_keys))",
        "    fig.layout.meta = dict(cells=cell_labels(window, (), ()))",
        "the all-heads grid may leave the words Compare names without a label",
    ),
    Fault(
        "grid-compare-unnamed",
        "ui/compare.py",
        '            named = ((), ()) if result is None else named_positions(result, n, values[c["kind"]], referents)',
        "            named = ((), ())",
        "Compare's grids of every head may leave the token and the words its summary names without a label",
    ),
    Fault(
        "grid-js-query-unmarked",
        "ui/js/figures.js",
        "[marked, ...(keep[letter] || [])]",
        "[...(keep[letter] || [])]",
        "the all-heads grid may leave the current step's query without a label (caught in the browser)",
    ),
    Fault(
        "pipeline-always-side-by-side",
        "visualizer/pipeline.py",
        "side_by_side(queries, keys, margin, cell) if cell >= LABEL_PX else stacked(queries, keys, margin)",
        "side_by_side(queries, keys, margin, cell)",
        "inside one head: a long sentence's three panels squeezed side by side",
    ),
    Fault(
        "pipeline-phone-side-by-side",
        "visualizer/pipeline.py",
        "                meta=dict(narrow=narrow),\n",
        "                meta=dict(),\n",
        "inside one head on a phone: the three panels squeezed side by side, their labels over each other",
    ),
    Fault(
        "menu-dismissed-empty-dict",
        "ui/attention.py",
        "return gr.skip() if cell is None else",
        "return {} if cell is None else",
        "dismissing 'Open a head of the grid' returns too few values (the controls turn into error badges)",
    ),
    # ---- the phone's figures; caught by tests/browser/test_browser_phone_figures.py (a browser test: --browser)
    Fault(
        "phone-training-side-by-side",
        "visualizer/training.py",
        "            meta=dict(narrow=stacked_curves(sorted({1, 2, 3} - filled))),\n",
        "",
        "a phone draws the three training panels abreast: the loss panel's title runs past the figure's left edge",
    ),
    Fault(
        "phone-pe-rows-unthinned",
        "visualizer/positional.py",
        "position_ticks(n_positions, labels, (a_top - a_bottom) * plot_h / n_positions)",
        "position_ticks(n_positions, labels, TICK_GAP_PX)",
        "a phone names every position of the encoding matrix in its 8 px rows (the labels overlap)",
    ),
    Fault(
        "projector-rows-counted-as-labels",
        "ui/js/figures.js",
        "const every = Math.ceil(ROW_PX * rowsOf(axis, values) / (grown * span(axis)));",
        "const every = Math.ceil(ROW_PX * axis.ticktext.length / (grown * span(axis)));",
        "on a projector the encoding matrix's token labels, on consecutive rows of 64, are not thinned (they overlap)",
    ),
    Fault(
        "projector-wave-names-left",
        "visualizer/positional.py",
        'zeroline=False, side="right"',
        "zeroline=False",
        "on a projector the waves' names run into the matrix's colour bar",
    ),
    Fault(
        "phone-pe-titles-not-lifted",
        "visualizer/positional.py",
        'title["yshift"] = STACKED_TITLE_LIFT_PX',
        'title["yshift"] = 0',
        "a phone's similarity panel title sits on its top row's label",
    ),
    Fault(
        "phone-masks-rows-unthinned",
        "visualizer/heatmap.py",
        "    every = max(1, int(np.ceil(LABEL_LINE_EM * size / max(row_px, 1e-9))))",
        "    every = 1",
        "a phone names every query of the cross-attention mask in its 9 px rows (the labels overlap)",
    ),
    Fault(
        "phone-masks-look-ahead-full-height",
        "visualizer/masks.py",
        "        square * shown / n_target,\n",
        "        square,\n",
        "a phone's look-ahead mask at step 1: one row over the empty height of all of them",
    ),
    Fault(
        "phone-masks-look-ahead-all-rows",
        "visualizer/masks.py",
        "range=[shown - 0.5, -0.5], **fitted_rows(",
        "range=[n_target - 0.5, -0.5], **fitted_rows(",
        "a phone's look-ahead mask keeps the rows of every step: at step 1 one row in a panel of empty rows",
    ),
    Fault(
        "phone-diagnostics-titles-unwrapped",
        "visualizer/explain.py",
        "titles=[wrapped(title, NARROW_TITLE_CHARS) for title in titles],",
        "titles=titles,",
        "a phone's head diagnostics titles on one line each, wider than their panels",
    ),
    Fault(
        "projector-outlined-row-unnamed",
        "ui/js/figures.js",
        "    return outline ? (outline.y0 + outline.y1) / 2 : null;",
        "    return null;",
        "thinned for the projector, a figure's rows may leave the step's outlined query unnamed",
    ),
    Fault(
        "masks-strip-step-unnamed",
        "visualizer/masks.py",
        "yaxis.update(fitted_rows(target, strip_px / n_target, MIN_FONT, marked=last))",
        "yaxis.update(fitted_rows(target, strip_px / n_target, MIN_FONT))",
        "the masks' strip (d) names every k-th query, the step's only by chance",
    ),
    # ---- caught by tests/browser/test_browser_compare.py (--browser, the shipped checkpoint)
    Fault(
        "hidden-figure-refit-into-no-width",
        "ui/js/figures.js",
        "    if (!target.clientWidth) return;\n",
        "",
        "a figure hidden with its tab is refitted into a box of no width (Plotly: 'Something went wrong with axis scaling')",
    ),
    # ---- caught by tests/browser/test_browser_accessibility.py (--browser; docs/accessibility.md)
    Fault(
        "a11y-outlined-row-not-first",
        "ui/js/a11y.js",
        "    if (marked !== null && marked >= 0 && marked < z.length) order.unshift(...order.splice(marked, 1));\n",
        "",
        "a heatmap's text says its rows in order: the step's query, outlined in the figure, is not said first",
    ),
    Fault(
        "a11y-step-not-announced",
        "ui/js/a11y.js",
        "    if (text && announce.textContent !== text) announce.textContent = text;",
        "    if (text && !announce.textContent) announce.textContent = text;",
        "the live region says the first step only: a screen reader hears nothing as the step changes",
    ),
    Fault(
        "a11y-choices-deaf-to-arrows",
        "ui/js/a11y.js",
        "    if (!radio || !['ArrowUp', 'ArrowDown'].includes(event.key)",
        "    if (true || !radio || !['ArrowUp', 'ArrowDown'].includes(event.key)",
        "Up/Down on a head, layer or kind picks nothing: the keyboard cannot switch the figure's head",
    ),
    Fault(
        "a11y-focus-ring-gone",
        "ui/style.css",
        "  outline: 3px solid #1d4ed8 !important; outline-offset: 2px; }",
        "  outline-offset: 2px; }",
        "buttons and tabs take the keyboard's focus without a visible ring",
    ),
    Fault(
        "a11y-primary-button-pale",
        "ui/style.css",
        "  --button-primary-background-fill: #c2410c;",
        "  --button-primary-background-fill: #f97316;",
        "white on Gradio's orange: Translate and Play at 2.8:1, below AA's 4.5:1",
    ),
    Fault(
        "layout-colour-bar-over-cells",
        "visualizer/grid.py",
        'x=1.0, xanchor="left", y=(low + high) / 2, yanchor="middle"',
        'x=0.4, xanchor="left", y=(low + high) / 2, yanchor="middle"',
        "a phone's stacked panels put their colour bars over the cells (flow to the source)",
    ),
    Fault(
        "layout-title-onto-another",
        "visualizer/grid.py",
        "notes = [dict(note, x=0.5, y=domain[1]) for note, domain in zip(",
        "notes = [dict(note, x=0.5, y=domains[0][1]) for note, domain in zip(",
        "a phone's stacked panels print both titles in one place",
    ),
    Fault(
        "layout-control-unlabelled",
        "ui/stepping.py",
        '"first": ("« First", "step-first"),',
        '"first": ("", "step-first"),',
        "the First button has no text and no label",
    ),
]
