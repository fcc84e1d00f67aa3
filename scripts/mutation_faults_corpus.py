"""The planted faults of scripts/mutation_check.py in the Explain tab's corpus panels, after VIEW_FAULTS in
scripts/mutation_faults_views.py: "Heads across the corpus" (its head roles, including cross-attention's aligned and
monotone heads, the pruning curves and the query-key map: model/analysis/corpus/, ui/explain/corpus_heads.py,
corpus_figures.py) and "Attribution vs attention" (ui/explain/attribution.py). One exact text replacement each; `old`
must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale` checks).
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

CORPUS_FAULTS = [
    # ---- the corpus panels (ui/explain/corpus_heads.py, corpus_figures.py, attribution.py): tests/ui/explain/test_corpus_views.py
    Fault(
        "corpus-qk-keys-unshifted",
        "model/analysis/corpus/qk_map.py",
        "        normalised = (x + projection.key_shift) / projection.scale",
        "        normalised = x / projection.scale",
        "the query-key map's keys are not moved onto the queries' centroid: the keys' cloud sits apart",
    ),
    Fault(
        "corpus-qk-keys-plotted-offset",
        "ui/explain/corpus_figures.py",
        "        head_map.coords[l, h],\n",
        "        head_map.coords[l, h] + 0.5 * is_key[:, None] * head_map.coords[l, h].std(),\n",
        "the query-key map draws its keys' cloud shifted by half a standard deviation",
    ),
    Fault(
        "corpus-qk-scale-inverted",
        "model/analysis/corpus/qk_map.py",
        "scale = float(np.sqrt(k_norm / q_norm))",
        "scale = float(np.sqrt(q_norm / k_norm))",
        "queries and keys scaled the wrong way: the clouds' mean norms differ",
    ),
    Fault(
        "corpus-attribution-rows-swapped",
        "ui/explain/attribution.py",
        "        attribution.integrated_gradients[t],\n        attribution.input_x_gradient[t],\n",
        "        attribution.input_x_gradient[t],\n        attribution.integrated_gradients[t],\n",
        "the attribution view shows input x gradient as integrated gradients and vice versa",
    ),
    Fault(
        "corpus-attribution-not-following-step",
        "ui/explain/attribution.py",
        "view([figure, facts], draw, controls=[kept], follows_step=True)",
        "view([figure, facts], draw, controls=[kept])",
        "the attribution view stays on the step it was first drawn at",
    ),
    Fault(
        "corpus-facts-strongest-signed",
        "ui/explain/attribution.py",
        "s = int(np.argmax(np.abs(values)))",
        "s = int(np.argmax(values))",
        "the attribution facts name the most positive token, not the strongest",
    ),
    Fault(
        "corpus-prune-most-important",
        "ui/explain/corpus_figures.py",
        "return ablation_of(data.pruning.order[:count])",
        "return ablation_of(data.pruning.order[::-1][:count])",
        "'prune the k least important' switches off the k most important heads",
    ),
    Fault(
        "corpus-prune-one-fewer",
        "ui/explain/corpus_heads.py",
        "ablation = pruned_ablation(data, k_value)",
        "ablation = pruned_ablation(data, max(int(k_value) - 1, 1))",
        "the re-decode switches off one head fewer than the k it names",
    ),
    Fault(
        "corpus-prune-marker-ignores-k",
        "ui/explain/corpus_heads.py",
        "pruning_view(data, int(values[c.k]))",
        "pruning_view(data)",
        "the pruning curves do not mark the chosen k",
    ),
    Fault(
        "corpus-map-layer-head-swapped",
        "ui/explain/corpus_figures.py",
        "l, h = clamp(layer, head_map.coords.shape[0]), clamp(head, head_map.coords.shape[1])",
        "l, h = clamp(head, head_map.coords.shape[0]), clamp(layer, head_map.coords.shape[1])",
        "the query-key map draws head l of layer h",
    ),
    Fault(
        "corpus-map-sentence-any-head",
        "ui/explain/corpus_figures.py",
        'placed["head"] != (kind, layer, head)',
        'placed["head"][0] != kind',
        "the user's sentence placed for one head stays on every other head's map",
    ),
    Fault(
        "corpus-drawn-before-opened",
        "ui/explain/corpus_heads.py",
        "    def draw_roles(trace, step, values) -> dict:\n        if not values[c.opened]:",
        "    def draw_roles(trace, step, values) -> dict:\n        if False:",
        "the head-role grid is drawn whenever the Explain tab opens, not when its panel does",
    ),
    # the cross-attention roles: tests/model/analysis/corpus/test_roles.py and tests/ui/explain/test_corpus_views.py
    Fault(
        "corpus-aligned-layer-one-alignment",
        "model/analysis/corpus/roles.py",
        "linked = word_alignment(w, source_tokens, output_tokens).source_index",
        "linked = word_alignment(w[:1], source_tokens, output_tokens).source_index",
        "the aligned share compares each head with decoder layer 1's alignment, not the one the app draws (all layers)",
    ),
    Fault(
        "corpus-monotone-ranks-wrong-axis",
        "model/analysis/corpus/roles.py",
        "below = (values[..., :, None] > values[..., None, :]).sum(-1)",
        "below = (values[..., :, None] > values[..., None, :]).sum(-2)",
        "the monotone rho ranks each position by the values above it (the wrong axis): a head moving forward reads "
        "as moving backwards",
    ),
    Fault(
        "corpus-monotone-counts-short-sentences",
        "model/analysis/corpus/roles.py",
        "np.array([len(steps) >= MONOTONE_MIN_QUERIES])",
        "np.array([len(steps) >= 1])",
        "a sentence of one or two linked queries adds a monotone rho, though it has no order to speak of",
    ),
    Fault(
        "corpus-aligned-outputs-shifted",
        "model/analysis/corpus/collect.py",
        "output_tokens = tokenizer.tokens(batch.labels[row, :t].tolist())",
        "output_tokens = tokenizer.tokens(tgt_in[row, :t].tolist())",
        "the alignment's outputs are read off the decoder input ([BOS] first): each query is linked one token late",
    ),
    Fault(
        "corpus-monotone-wins-over-shares",
        "model/analysis/corpus/roles.py",
        'monotone = unlabelled & (np.asarray(stats["monotone"], dtype=np.float64) >= MONOTONE_RHO)',
        'monotone = np.asarray(stats["monotone"], dtype=np.float64) >= MONOTONE_RHO',
        "a head whose share names its role (positional, aligned) is relabelled monotone when its rho is high",
    ),
    Fault(
        "corpus-older-file-says-nothing",
        "ui/explain/corpus_figures.py",
        'return f"{lacking}\\n\\n{said}" if lacking else said',
        "return said",
        "an older corpus file without the cross-attention roles opens as if it had them",
    ),
    Fault(
        "corpus-summary-counts-no-heads-without-role",
        "ui/explain/corpus_figures.py",
        "none, total = none + mixed, total + heads",
        "none, total = none, total + heads",
        "the roles summary says no head in all has no single role",
    ),
    Fault(
        "corpus-hover-aligned-from-same",
        "ui/explain/corpus_figures.py",
        "said.append(f\"aligned {100 * stats['aligned'][l, h]:.0f}%",
        "said.append(f\"aligned {100 * stats['same'][l, h]:.0f}%",
        "the roles grid's hover gives a cross head's positional share as its aligned share",
    ),
    Fault(
        "corpus-open-head-off-by-one",
        "ui/explain/corpus_heads.py",
        "**opener.show(kind_value, layer_value, str(head_value)),",
        "**opener.show(kind_value, layer_value, str(max(head_value - 1, 1))),",
        "opening a head of the corpus grid shows another head in the Attention tab",
    ),
]
