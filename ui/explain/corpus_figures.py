"""The pure half of the Explain panel "Heads across the corpus" (ui/explain/corpus_heads.py, which builds and
wires it): the corpus file that `python3 -m scripts.corpus_heads` writes beside the checkpoint, loaded and checked
once per checkpoint, and (trace, corpus data, controls) -> figure / HTML values, testable without Gradio events.
"""

from __future__ import annotations

import html
import threading
from pathlib import Path

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import Checkpoint, TranslationTrace
from model.analysis.corpus.importance import KINDS, ablation_of
from model.analysis.corpus.qk_map import project
from model.analysis.corpus.roles import ROLE_TEXT, role_counts
from model.analysis.corpus.store import CorpusHeads, corpus_path, corpus_status
from model.decoding.ablation import Ablation
from model.decoding.trace import ATTENTION_KINDS
from visualizer.corpus import head_role_grid, pruning_curves_figure
from visualizer.qk_map import qk_scatter

from ..common import clamp, plot
from ..text import public_path
from .panel import sentence_matches

COMMAND = "python3 -m scripts.corpus_heads --checkpoint {checkpoint}"


# --------------------------------------------------------------------------- loading, shared per checkpoint
def missing_message(checkpoint_dir: str | Path, problem: str) -> str:
    """HTML: the corpus file is missing, stale or unreadable, and the command that makes it."""
    path = html.escape(public_path(corpus_path(checkpoint_dir)))
    reason = {
        "missing": f"there is no <code>{path}</code>",
        "stale": f"<code>{path}</code> was computed for other weights (the checkpoint changed)",
    }.get(problem, f"<code>{path}</code> cannot be used ({html.escape(problem)})")
    command = html.escape(COMMAND.format(checkpoint=public_path(checkpoint_dir)))
    return (
        f'<div style="overflow-wrap: anywhere"><p><b>The corpus figures are not available</b>: {reason}. '
        "They are computed once per checkpoint (a few minutes on a CPU; fewer sentences with "
        "<code>--sentences 200 --prune-sentences 30</code>):</p>"
        f'<pre style="white-space: pre-wrap"><code>{command}</code></pre>'
        "<p>then restart the app (the file is read when the app starts). The panel "
        "<i>Attribution vs attention</i> works without it.</p></div>"
    )


class CorpusData:
    """The checkpoint's corpus file, read and checked against the weights once (shared, read-only)."""

    def __init__(self, checkpoint: Checkpoint):
        self.checkpoint, self.lock, self.loaded = checkpoint, threading.Lock(), None

    def get(self) -> tuple[CorpusHeads | None, str]:
        """(data, "") or (None, HTML saying why there is none and how to make it)."""
        with self.lock:
            if self.loaded is None:
                data, problem = corpus_status(corpus_path(self.checkpoint.path), self.checkpoint.model)
                self.loaded = (data, "" if data is not None else missing_message(self.checkpoint.path, problem))
        return self.loaded


# --------------------------------------------------------------------------- pure views
def head_details(data: CorpusHeads, kind: str) -> np.ndarray:
    """(L, h) hover text: every statistic of each head (cross-attention's aligned share and monotone rho when the
    file has them)."""
    stats = data.stats[kind]
    n_layers, n_heads = stats["confidence"].shape
    shares = ("previous", "same", "next", "rare", "eos", "punctuation", "confidence")

    def lines(l: int, h: int) -> list[str]:
        said = [
            " · ".join(f"{name} {100 * stats[name][l, h]:.0f}%" for name in shares[:4]),
            " · ".join(f"{name} {100 * stats[name][l, h]:.0f}%" for name in shares[4:]),
            f"entropy {stats['entropy'][l, h]:.2f} bits",
        ]
        if "aligned" in stats and "monotone" in stats:
            said.append(f"aligned {100 * stats['aligned'][l, h]:.0f}% · monotone ρ {stats['monotone'][l, h]:+.2f}")
        return said

    return np.array(
        [["\n".join(lines(l, h)) for h in range(n_heads)] for l in range(n_layers)],
        dtype=object,
    )


def roles_view(data: CorpusHeads, selected: tuple[str, int, int] | None = None) -> PlotData:
    """Every head coloured by role, sized by normalised importance."""
    figure = head_role_grid(
        data.roles,
        data.importance_normalized,
        kind_labels={kind: spec.label for kind, spec in ATTENTION_KINDS.items()},
        role_text=ROLE_TEXT,
        details={kind: head_details(data, kind) for kind in KINDS},
        selected=selected,
        title=f"Every head over {data.settings['examples']['roles']} val sentences: role and importance",
    )
    return plot(figure, "corpus-head-roles")


def lacking_line(data: CorpusHeads, checkpoint_dir: str | Path) -> str:
    """One Markdown line for a corpus file made before some of its kinds' stats existed ("" for a complete file):
    what it lacks, what that means for the roles, and the command that adds them."""
    if not data.lacking:
        return ""
    missing = "; ".join(
        f"{ATTENTION_KINDS[kind].label.split(' (')[0].lower()}: {' and '.join(names)}"
        for kind, names in data.lacking.items()
    )
    command = COMMAND.format(checkpoint=public_path(checkpoint_dir))
    return (
        f"This corpus file was made before some roles were measured ({missing}): its heads are labelled without "
        f"them; `{command}` adds them."
    )


def roles_summary(data: CorpusHeads, checkpoint_dir: str | Path) -> str:
    """Markdown over the roles figure: what the file lacks (an older file), then what the roles found say about this
    model, one sentence per kind of attention, counted from the corpus file, how many heads have no single role in
    all and what that means."""
    sentences, none, total = [], 0, 0
    for kind in KINDS:
        counts = role_counts(data.roles[kind])
        label, heads, mixed = ATTENTION_KINDS[kind].label.split(" (")[0], sum(counts.values()), counts.get("mixed", 0)
        none, total = none + mixed, total + heads
        named = {role: count for role, count in counts.items() if role != "mixed"}
        if not named:
            sentences.append(f"{label}: none of its {heads} heads does one job on most sentences.")
            continue
        jobs = ", ".join(f"{count} {ROLE_TEXT[role]}" for role, count in named.items())
        rest = f"; the other {mixed} {'has' if mixed == 1 else 'have'} “no single role”" if mixed else ""
        sentences.append(f"{label}: {sum(named.values())} of its {heads} heads have one role ({jobs}){rest}.")
    said = (
        f"What the roles say about this model: {' '.join(sentences)} In all, {none} of the {total} heads "
        f"{'has' if none == 1 else 'have'} no single role. A head of “no single role” does none of these fixed jobs "
        "on most of its queries: it reads different words from sentence to sentence, so what it does shows one "
        "sentence at a time (the Attention tab), not as one label (how each role is measured and where its line "
        "lies: *More about this*, below)."
    )
    lacking = lacking_line(data, checkpoint_dir)
    return f"{lacking}\n\n{said}" if lacking else said


def head_choices(data: CorpusHeads) -> list[tuple[str, str]]:
    """Dropdown choices "kind:layer:head" (1-based) with each head's role and importance, by kind."""
    return [
        (
            f"{ATTENTION_KINDS[kind].label} · layer {l + 1} · head {h + 1} · {ROLE_TEXT.get(role, role)} · "
            f"importance {data.importance_normalized[kind][l, h]:.2f}",
            f"{kind}:{l + 1}:{h + 1}",
        )
        for kind in KINDS
        for (l, h), role in np.ndenumerate(data.roles[kind])
    ]


def parse_head(value: str) -> tuple[str, int, int]:
    """ "cross:2:3" -> ("cross", 2, 3) (1-based layer and head)."""
    parts = str(value).split(":")
    if len(parts) != 3 or parts[0] not in KINDS or not parts[1].isdigit() or not parts[2].isdigit():
        raise gr.Error(f"Not a head: {value!r}")
    return parts[0], int(parts[1]), int(parts[2])


def pruning_view(data: CorpusHeads, k: int | None = None) -> PlotData:
    curves = data.pruning
    figure = pruning_curves_figure(
        curves.pruned,
        curves.bleu_importance,
        curves.loss_importance,
        curves.bleu_random,
        curves.loss_random,
        total_heads=len(curves.order),
        current=k,
        title=f"Pruning heads ({data.settings['examples']['pruning']} val sentences, greedy)",
    )
    return plot(figure, "corpus-pruning")


def pruned_ablation(data: CorpusHeads, k: float | None) -> Ablation:
    """The Ablation switching off the k least important heads (Michel et al.'s order)."""
    count = int(np.clip(int(k or 0), 0, len(data.pruning.order)))
    return ablation_of(data.pruning.order[:count])


QK_SIDES = {
    "encoder": ("source query", "source key"),
    "decoder_self": ("target query", "target key"),
    "cross": ("target query", "source key"),
}


def qk_view(
    data: CorpusHeads,
    kind: str,
    layer: float | None,
    head: float | None,
    color_by: str = "side",
    sentence: dict | None = None,
) -> PlotData:
    """One head's corpus map; `sentence` = {"queries", "keys" (vectors), "query_tokens", "key_tokens"} overlays
    the user's sentence, projected with the head's stored basis."""
    head_map = data.maps[kind]
    l, h = clamp(layer, head_map.coords.shape[0]), clamp(head, head_map.coords.shape[1])
    n_q = head_map.n_queries
    tokens = np.concatenate([head_map.query_tokens, head_map.key_tokens])
    positions = np.concatenate([head_map.query_positions, head_map.key_positions])
    is_key = np.arange(len(tokens)) >= n_q
    query_name, key_name = QK_SIDES[kind]
    overlay = {}
    if sentence is not None:
        projection = head_map.projection(l, h)
        points = np.concatenate(
            [project(sentence["queries"], projection, "query"), project(sentence["keys"], projection, "key")]
        )
        overlay = dict(
            current=points,
            current_is_key=np.arange(len(points)) >= len(sentence["queries"]),
            current_tokens=[*sentence["query_tokens"], *sentence["key_tokens"]],
            current_positions=np.concatenate([np.arange(len(sentence["queries"])), np.arange(len(sentence["keys"]))]),
        )
    explained = head_map.explained[l, h].sum()
    figure = qk_scatter(
        head_map.coords[l, h],
        is_key,
        tokens,
        positions,
        color_by=color_by,
        query_name=query_name,
        key_name=key_name,
        **overlay,
        title=f"{ATTENTION_KINDS[kind].label}, layer {l + 1}, head {h + 1}: queries and keys "
        f"({100 * explained:.0f}% of the variance in view)",
    )
    return plot(figure, f"qk-{kind}-L{l + 1}-H{h + 1}")


def sentence_tokens(trace: TranslationTrace, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of the user's sentence for one kind."""
    spec = ATTENTION_KINDS[kind]
    return list(getattr(trace, spec.queries_field)), list(getattr(trace, spec.keys_field))


def placed_sentence(
    trace: TranslationTrace | None, placed: dict | None, kind: str, layer: int, head: int
) -> dict | None:
    """The user's sentence on the map ({"queries", "keys", "query_tokens", "key_tokens"}) when `placed` was
    computed for this trace and this head (0-based layer and head), else None."""
    if not sentence_matches(trace, placed) or placed["head"] != (kind, layer, head):
        return None
    query_tokens, key_tokens = sentence_tokens(trace, kind)
    return {
        "queries": placed["queries"],
        "keys": placed["keys"],
        "query_tokens": query_tokens,
        "key_tokens": key_tokens,
    }


WAITING_PRUNED = (
    "<p>Press <strong>Re-decode my sentence without them</strong> to see it decoded with these heads "
    "off.</p>"
)  # an HTML component: HTML, not Markdown
