"""What each Explain panel's result opens on (`Panel.reading`): one plain sentence of what the result means for this
sentence, no technical name in it (they come after), and every number and token it states computed from the run:
here each against an independent count from the trace or the run (plain loops and numpy), on the tiny model.
"""

from __future__ import annotations

import dataclasses
import re
from html import unescape

import numpy as np
from helpers import first_sentence, plain_words as plain

from model.analysis.rollout import trace_source_flow
from model.analysis.step_changes import step_change
from model.decoding.ablation import Ablation
from model.text.special_tokens import SPECIAL_TOKENS
from serving import Runner, jobs
from ui.explain import alignment, beam, cache, changes, diagnostics, film_view, panel, rollout


# --------------------------------------------------------------------------- the interventions and the branch
def common_length(a: list, b: list) -> int:
    """The longest common subsequence's length, by the textbook table (an independent count of the kept tokens)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[len(a)][len(b)]


def test_an_intervention_opens_on_how_many_tokens_changed_and_how_sure_the_model_stays(checkpoint, trace):
    result = panel.intervene(Runner(checkpoint), trace, Ablation(cross_heads={(0, 0), (1, 1)}))
    said = panel.outcome(trace, result, "With 2 heads switched off")
    n, k = len(trace.output_ids), len(trace.output_ids) - common_length(trace.output_ids, result.trace.output_ids)
    before, after = result.original_probs.mean(), result.changed_probs.mean()
    assert said.startswith("With 2 heads switched off, the model writes ") and plain(first_sentence(said))
    assert f"goes from {before:.2f} to {after:.2f}" in said
    same = result.trace.output_ids == trace.output_ids
    assert ("the same translation" in said) == same and (f"({k} of its {n} tokens change)" in said) == (k > 0)
    # the same tokens one place later are kept: an output that only adds one says so
    longer = dataclasses.replace(
        result,
        trace=dataclasses.replace(trace, output_ids=[-1, *trace.output_ids], output_tokens=["x", *trace.output_tokens]),
    )
    assert f"another translation (its {n} tokens all kept, 1 added)" in panel.outcome(trace, longer, "X")
    # the same output, made to be: what it means follows the drop in the original tokens' probability
    kept = dataclasses.replace(result, trace=trace, changed_probs=result.original_probs - 0.01)
    assert panel.outcome(trace, kept, "X").endswith("it hardly needs what was taken away here.")
    unsure = dataclasses.replace(kept, changed_probs=result.original_probs - 0.2)
    assert panel.outcome(trace, unsure, "X").endswith("it still gets there, less sure of its words.")


def card_chips(comparison: str) -> list[list[tuple[str, str]]]:
    """Each output card's chips as (token, mark) pairs, mark "" when unmarked (besides "special")."""
    cards = comparison.split("<div><h4>")[1:]
    chip = re.compile(r'<span class="tok([^"]*)"[^>]*>([^<]*)</span>')
    return [[(unescape(t), marks.replace("special", "").strip()) for marks, t in chip.findall(c)] for c in cards]


def test_a_branch_opens_on_what_it_changed_aligned_and_marks_only_that(checkpoint, trace):
    from ui.explain.branching import branch

    candidate = next(int(i) for i in trace.candidate_ids[1] if i != trace.output_ids[1])
    branched, t = branch(Runner(checkpoint), trace, 2, candidate)
    said = panel.branch_outcome(trace, branched, t)
    assert said.startswith(f"Forcing “{branched.output_tokens[1]}” instead of “{trace.output_tokens[1]}” at step 2, ")
    n = len(trace.output_ids) - t
    kept = common_length(trace.output_ids[t:], branched.output_ids[t:])
    assert f"it keeps {kept} of the original's {n} tokens from step 2 on." in said
    html = panel.comparison_html(trace, branched, "Branch", forced_step=t, said=said)
    assert html.startswith('<p class="explain-reading">Forcing ')
    original, changed = card_chips(html)
    assert [token for token, _ in original] == trace.output_tokens
    assert [token for token, _ in changed] == branched.output_tokens and changed[t][1] == "forced"
    # what is left unmarked from the forced step on is the same tokens in both, as many as they can share
    left = [token for token, mark in original[t:] if not mark]
    right = [token for token, mark in changed[t:] if not mark]
    assert left == right and len(left) == kept
    assert not any(mark for _, mark in original[:t] + changed[:t])  # the prefix is the original's


VOCABULARY: dict[str, int] = {}  # made-up ids: the same token, the same id


def made_up(trace, tokens: list[str]):
    """`trace` with these output tokens."""
    ids = [VOCABULARY.setdefault(token, len(VOCABULARY)) for token in tokens]
    probs = np.linspace(0.9, 0.5, len(tokens)).astype(np.float32)
    return dataclasses.replace(
        trace, output_tokens=tokens, output_ids=ids, chosen_probs=probs, translation=" ".join(tokens)
    )


GARDEN = ["▁I", "▁play", "▁soccer", "▁in", "▁the", "▁garden", ".", "[EOS]"]


def test_a_branch_that_shifts_the_rest_by_one_word_marks_and_names_only_that_word(trace):
    original = made_up(trace, GARDEN)
    shifted = made_up(trace, ["▁I", "▁often", *GARDEN[1:]])  # "often" forced at step 2, the rest one place later
    said = panel.branch_outcome(original, shifted, 1)
    assert said == (
        "Forcing “▁often” instead of “▁play” at step 2, the model adds “▁often”: it keeps 7 of the original's "
        "7 tokens from step 2 on."
    )
    assert plain(first_sentence(said)) and first_sentence(said) == said
    before, after = card_chips(panel.comparison_html(original, shifted, "Branch", forced_step=1, said=said))
    assert [mark for _, mark in before] == [""] * 8
    assert [mark for _, mark in after] == ["", "forced", *[""] * 7]


def test_a_branch_names_each_replaced_and_dropped_word_and_counts_what_it_keeps(trace):
    original = made_up(trace, GARDEN)
    branched = made_up(trace, ["▁I", "▁kick", "▁soccer", "▁in", "▁a", "▁garden", "[EOS]"])
    said = panel.branch_outcome(original, branched, 1)
    assert said == (
        "Forcing “▁kick” instead of “▁play” at step 2, the model writes “▁kick” for “▁play”, writes “▁a” for "
        "“▁the” and drops “.”: it keeps 4 of the original's 7 tokens from step 2 on."
    )
    before, after = card_chips(panel.comparison_html(original, branched, "Branch", forced_step=1, said=said))
    assert [mark for _, mark in before] == ["", "replaced", "", "", "replaced", "", "removed", ""]
    assert [mark for _, mark in after] == ["", "forced", "", "", "replaced", "", ""]
    marked = panel.comparison_html(original, branched, "Branch", forced_step=1)
    assert 'title="step 7: p = ' in marked and " · removed" in marked  # the mark in words, not only in colour
    same = panel.branch_outcome(original, original, 1)
    assert same == "Forcing “▁play” (the model's own choice) at step 2, the model goes on as before."
    many = made_up(trace, ["▁I", "▁x", "▁soccer", "▁y", "▁the", "▁z", ".", "▁w"])
    assert panel.branch_outcome(original, many, 1).endswith(
        "writes “▁z” for “▁garden” and 1 more change: it keeps 3 of the original's 7 tokens from step 2 on."
    )


# --------------------------------------------------------------------------- beam search
def test_beam_search_opens_on_whether_it_ends_in_the_same_translation(checkpoint, trace):
    comparison = jobs.beam_versus_greedy(Runner(checkpoint), trace)
    said = beam.beam_reading(comparison)
    best = comparison.beams[0]
    assert plain(first_sentence(said)) and said.startswith("Keeping the 4 likeliest partial translations open")
    same = list(best.ids) == list(comparison.greedy.ids)
    assert ("ends in the same translation" in first_sentence(said)) == same
    if not same:
        parts = next(t for t, (a, b) in enumerate(zip(best.ids + [-1], comparison.greedy.ids + [-2])) if a != b)
        assert f"parts from the one shown at step {parts + 1}" in said and f"{best.score:.3f}" in said
    other = dataclasses.replace(comparison, beams=[dataclasses.replace(best, diverges_at=2, text="x y", score=-0.5)])
    assert "parts from the one shown at step 3: “x y”" in beam.beam_reading(other)
    kept = beam.beam_reading(dataclasses.replace(comparison, beams=[dataclasses.replace(best, diverges_at=None)]))
    assert kept.startswith("Keeping the 4 likeliest") and first_sentence(kept).endswith("ends in the same translation.")
    assert plain(first_sentence(kept)) and "Beam search" in kept  # the technical name after


# --------------------------------------------------------------------------- the KV cache and the step's changes
def test_the_cache_opens_on_the_stored_token_the_head_reads_most(checkpoint, trace):
    recording = jobs.record_cache(Runner(checkpoint), trace)
    for step in (1, 3):
        _, facts = cache.cache_views(trace, recording, step, 2, 3)
        row = trace.decoder_self_attention[1, 2, step - 1, :step]  # the trace's own read: cached == uncached
        top = int(np.argmax(row))
        said = first_sentence(facts)
        assert plain(said) and said.startswith(f"At step {step} the decoder reuses what it stored for ")
        assert f"the stored `{trace.target_tokens[top]}` (row {top + 1}, weight {row[top]:.2f})" in said


def test_a_steps_changes_open_on_its_tokens_and_the_head_that_moved_most(trace):
    for t in range(trace.num_steps):
        said = changes.reading(step_change(trace, t))
        assert said.startswith(
            f"At step {t + 1} the decoder reads “{trace.target_tokens[t]}” and chooses “{trace.output_tokens[t]}”"
        ) and plain(first_sentence(said))
        if t == 0:
            assert said.endswith("there is no step before it to compare with.")
            continue
        moved = {}  # total variation between the query rows of steps t and t - 1, written out
        for kind, weights in (
            ("self-attention", trace.decoder_self_attention),
            ("cross-attention", trace.cross_attention),
        ):
            width = t + 1 if kind == "self-attention" else weights.shape[-1]
            for l, h in np.ndindex(weights.shape[:2]):
                new, old = weights[l, h, t, :width], weights[l, h, t - 1, : width - (kind == "self-attention")]
                moved[kind, l, h] = 0.5 * (np.abs(new[: len(old)] - old).sum() + new[len(old) :].sum())
        kind, l, h = max(moved, key=moved.get)
        assert f"is {kind} layer {l + 1}, head {h + 1} ({moved[kind, l, h]:.2f} of its attention moved)" in said


# --------------------------------------------------------------------------- views of the kept trace
def test_the_alignment_opens_on_how_many_links_are_clear(trace):
    *_, said = alignment.alignment_views(trace, [], "subword")
    weights = trace.cross_attention.mean(axis=(0, 1))  # (T, S): heads, then every layer
    real = [
        s for s, token in enumerate(trace.source_tokens) if token not in SPECIAL_TOKENS and not token.startswith("<2")
    ]
    outputs = [t for t, token in enumerate(trace.output_tokens) if token not in SPECIAL_TOKENS]
    clear = sum(weights[t, real].max() >= alignment.CLEAR_LINK for t in outputs)
    n = len(outputs)
    opening = {n: f"All {n} linked output tokens", 0: f"None of the {n} linked output tokens"}
    assert first_sentence(said).startswith(opening.get(clear, f"Of the {n} linked output tokens, {clear} read"))
    assert plain(first_sentence(said)) and "Pharaoh" in said  # the technical name after


def test_the_diagnostics_open_on_the_narrowest_and_widest_head(trace):
    for kind, weights, keys in (
        ("encoder", trace.encoder_attention, trace.source_tokens),
        ("cross", trace.cross_attention, trace.source_tokens),
    ):
        *_, said = diagnostics.diagnostics_views(trace, kind)
        w = weights.astype(np.float64)
        entropy = -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1).mean(-1)  # (L, h)
        special = [k for k, token in enumerate(keys) if token in SPECIAL_TOKENS or token.startswith("<2")]
        resting = int((w[..., special].sum(-1).mean(-1) >= diagnostics.RESTING).sum())
        narrow, wide = (
            np.unravel_index(entropy.argmin(), entropy.shape),
            np.unravel_index(entropy.argmax(), entropy.shape),
        )
        sentence = first_sentence(said)
        assert plain(sentence) and f"layer {narrow[0] + 1}, head {narrow[1] + 1} looks most narrowly" in sentence
        assert (
            f"layer {wide[0] + 1}, head {wide[1] + 1} most widely, and {resting} of the {entropy.size} heads"
            in sentence
        )
        assert f"entropy {entropy[narrow]:.2f} and {entropy[wide]:.2f} bits" in said  # the technical numbers after


def test_the_flow_opens_on_the_source_token_the_steps_output_draws_on(trace):
    flow = trace_source_flow(trace)
    for t in range(trace.num_steps):
        said = rollout.reading(trace, flow, t + 1)
        followed = int(np.argmax(flow.source_distribution[t]))
        raw = int(np.argmax(trace.cross_attention[-1, :, t].mean(0)))
        assert plain(first_sentence(said))
        assert said.startswith(
            f"At step {t + 1}, “{trace.output_tokens[t]}” draws most on “{trace.source_tokens[followed]}”"
        )
        assert ("to the same token" in said) == (raw == followed)


def test_the_film_opens_on_the_probes_translation_and_how_focused_the_head_is(film_run):
    from model.analysis.heads_forming import film_summary

    frames, _ = film_view.load(film_run / "best")
    summary = film_summary(frames, "en-de")
    for frame in (1, 2):
        facts, *_ = film_view.film_views(frames, summary, frame, "cross", 1, 3)
        probe = frames[frame - 1]["probes"]["en-de"]
        share = probe["cross_attention"][0, 2].max(-1).mean()
        said = re.sub(r"<[^>]+>", "", facts.split("</p>")[0])
        assert said.startswith(f"After {frames[frame - 1]['step']:,} training steps the model translates the probe")
        assert f"gives {share:.0%} of its attention to one token" in said and plain(first_sentence(said))
        assert ("already looks somewhere in particular" in said) == (share >= film_view.FOCUSED)
