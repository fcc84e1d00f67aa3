"""Every corpus-wide figure of one checkpoint, computed once (scripts/corpus_heads.py runs this):
head roles and confidence (Voita et al. 2019), head importance and pruning curves (Michel et al.
2019), and every head's query-key map (AttentionViz, Yeh et al. 2023).

Each part takes its own number of sentence pairs (each pair gives two examples, one per direction),
so a CPU can afford it: the pruning curves decode their sentences once per point and order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model.training.data import Example, Pair
from model.core.masks import causal_mask, decoder_mask, padding_mask
from model.text.tokenizer import SubwordTokenizer
from model.core.transformer import Transformer
from .batches import batches, corpus_examples
from .importance import KINDS, head_importance, normalized, pruning_curves, pruning_order
from .qk_map import fit_projection, project
from .roles import RoleSums, add_cross_sentence, add_sentence, role_labels
from .store import CorpusHeads, HeadMap, weights_hash
from .vectors import attention_inputs, queries_and_keys


@dataclass(frozen=True)
class CorpusSettings:
    role_sentences: int | None = None  # pairs for head roles (None = all)
    importance_sentences: int = 200  # pairs for head importance
    prune_sentences: int = 50  # pairs decoded at every point of the pruning curves
    map_sentences: int = 100  # pairs whose queries and keys make the query-key maps
    importance_batch: int = 1  # sentences per gradient (1 = the paper's per-sentence expectation)
    prune_points: int = 9  # pruning levels from none to every head
    random_orders: int = 1  # random pruning orders (the baseline)
    batch_size: int = 32  # sentences per forward pass elsewhere
    seed: int = 0

    def __post_init__(self) -> None:
        for name in (
            "importance_sentences",
            "prune_sentences",
            "map_sentences",
            "importance_batch",
            "prune_points",
            "batch_size",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.random_orders < 0 or (self.role_sentences is not None and self.role_sentences < 1):
            raise ValueError("random_orders must be >= 0 and role_sentences >= 1 (or None)")


def token_counts(examples: Sequence[Example], vocab_size: int) -> np.ndarray:
    """(V,) how often each id occurs in the examples' sources and targets (the rarity of rare-token heads)."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for example in examples:
        np.add.at(counts, example.source, 1)
        np.add.at(counts, example.target, 1)
    return counts


def lengths(examples: Sequence[Example], indices: Sequence[int]) -> tuple[list[int], list[int]]:
    """(source lengths, decoder-input lengths) of a batch's rows. Not counted from the padding: a
    shorter row's decoder input (target[:-1] of the padded batch) still holds its [EOS]."""
    return [len(examples[i].source) for i in indices], [len(examples[i].target) - 1 for i in indices]


@torch.no_grad()
def head_roles(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    examples: Sequence[Example],
    counts: np.ndarray,
    batch_size: int = 32,
) -> dict[str, dict[str, np.ndarray]]:
    """{kind: {stat: (L, h)}} over the examples (model/analysis/corpus/roles.py KIND_STATS), teacher-forced on the
    references: cross-attention row t is the query that chose the reference's token t + 1 (batch.labels)."""
    model.eval()
    pad = model.config.pad_id
    sums = {kind: RoleSums() for kind in KINDS}
    for batch in batches(examples, batch_size, pad):
        src, tgt_in = batch.src, batch.tgt_in
        src_mask = padding_mask(src, pad)
        encoded = model.encode(src, src_mask, output_attentions=True)
        decoded = model.decode(tgt_in, encoded.memory, src_mask, decoder_mask(tgt_in, pad), output_attentions=True)
        weights = {
            kind: torch.stack([a.weights for a in attentions], dim=1).float().numpy()  # (B, L, h, Tq, Tk)
            for kind, attentions in (
                ("encoder", encoded.self_attentions),
                ("decoder_self", decoded.self_attentions),
                ("cross", decoded.cross_attentions),
            )
        }
        for row, (s, t) in enumerate(zip(*lengths(examples, batch.indices))):
            source_ids, target_ids = src[row, :s].tolist(), tgt_in[row, :t].tolist()
            source_tokens, target_tokens = tokenizer.tokens(source_ids), tokenizer.tokens(target_ids)
            output_tokens = tokenizer.tokens(batch.labels[row, :t].tolist())
            add_sentence(
                sums["encoder"],
                weights["encoder"][row, :, :, :s, :s],
                source_tokens,
                counts[source_ids],
                np.ones((s, s), dtype=bool),
                "encoder",
            )
            add_sentence(
                sums["decoder_self"],
                weights["decoder_self"][row, :, :, :t, :t],
                target_tokens,
                counts[target_ids],
                causal_mask(t)[0, 0].numpy(),
                "decoder_self",
            )
            add_sentence(
                sums["cross"],
                weights["cross"][row, :, :, :t, :s],
                source_tokens,
                counts[source_ids],
                np.ones((t, s), dtype=bool),
                "cross",
            )
            add_cross_sentence(sums["cross"], weights["cross"][row, :, :, :t, :s], source_tokens, output_tokens)
    return {kind: sums[kind].means() for kind in KINDS}


@torch.no_grad()
def head_maps(
    model: Transformer, tokenizer: SubwordTokenizer, examples: Sequence[Example], batch_size: int = 32
) -> dict[str, HeadMap]:
    """{kind: HeadMap}: every head's queries and keys over the examples, normalised and projected to 2-D."""
    model.eval()
    pad = model.config.pad_id
    vectors = {kind: {"q": [], "k": []} for kind in KINDS}  # lists of (L, h, n, d_k) per batch
    meta = {kind: {"q": [], "k": []} for kind in KINDS}  # lists of (token, position, sentence)
    for batch in batches(examples, batch_size, pad):
        inputs = attention_inputs(model, batch.src, batch.tgt_in)
        src_len, tgt_len = lengths(examples, batch.indices)
        for kind in KINDS:
            pairs = [
                queries_and_keys(model, kind, layer, layer_inputs) for layer, layer_inputs in enumerate(inputs[kind])
            ]
            q = torch.stack([p[0] for p in pairs], dim=1)  # (B, L, h, Tq, d_k)
            k = torch.stack([p[1] for p in pairs], dim=1)  # (B, L, h, Tk, d_k)
            q_len = src_len if kind == "encoder" else tgt_len
            k_len = tgt_len if kind == "decoder_self" else src_len
            q_ids = batch.src if kind == "encoder" else batch.tgt_in
            k_ids = batch.tgt_in if kind == "decoder_self" else batch.src
            for row, example in enumerate(batch.indices):
                vectors[kind]["q"].append(q[row, :, :, : q_len[row]].float().numpy())
                vectors[kind]["k"].append(k[row, :, :, : k_len[row]].float().numpy())
                for side, ids, n in (("q", q_ids, q_len[row]), ("k", k_ids, k_len[row])):
                    tokens = tokenizer.tokens(ids[row, :n].tolist())
                    meta[kind][side] += [(token, position, example) for position, token in enumerate(tokens)]
    maps = {}
    for kind in KINDS:
        q = np.concatenate(vectors[kind]["q"], axis=2)  # (L, h, Nq, d_k)
        k = np.concatenate(vectors[kind]["k"], axis=2)  # (L, h, Nk, d_k)
        n_layers, n_heads, _, d_k = q.shape
        coords = np.zeros((n_layers, n_heads, q.shape[2] + k.shape[2], 2), dtype=np.float32)
        fields = {
            "mean": np.zeros((n_layers, n_heads, d_k)),
            "components": np.zeros((n_layers, n_heads, 2, d_k)),
            "key_shift": np.zeros((n_layers, n_heads, d_k)),
            "scale": np.zeros((n_layers, n_heads)),
            "explained": np.zeros((n_layers, n_heads, 2)),
        }
        for l in range(n_layers):
            for h in range(n_heads):
                projection = fit_projection(q[l, h], k[l, h])
                coords[l, h] = np.concatenate(
                    [project(q[l, h], projection, "query"), project(k[l, h], projection, "key")]
                )
                for name in fields:
                    fields[name][l, h] = getattr(projection, name)
        (qt, qp, qs), (kt, kp, ks) = (zip(*meta[kind][side]) for side in ("q", "k"))
        maps[kind] = HeadMap(
            np.array(qt, dtype=str),
            np.array(qp, dtype=np.int32),
            np.array(qs, dtype=np.int32),
            np.array(kt, dtype=str),
            np.array(kp, dtype=np.int32),
            np.array(ks, dtype=np.int32),
            coords,
            **fields,
        )
    return maps


def compute_corpus_heads(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    pairs: Sequence[Pair],
    settings: CorpusSettings = CorpusSettings(),
    source: str = "",
    log=print,
) -> CorpusHeads:
    """Roles, importance, pruning curves and query-key maps over `pairs` (German, English)."""
    model.eval()
    seconds = {}

    def timed(name, function, *args, **kwargs):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        seconds[name] = round(time.perf_counter() - start, 1)
        log(f"{name}: {seconds[name]} s")
        return result

    role_examples, _ = corpus_examples(pairs, tokenizer, settings.role_sentences)
    if not role_examples:
        raise ValueError("no sentence pairs to analyse (all empty or too long?)")
    counts = token_counts(role_examples, model.config.vocab_size)
    stats = timed("roles", head_roles, model, tokenizer, role_examples, counts, settings.batch_size)
    importance_examples, _ = corpus_examples(pairs, tokenizer, settings.importance_sentences)
    importance = timed("importance", head_importance, model, importance_examples, settings.importance_batch)
    scores = normalized(importance)
    prune_examples, references = corpus_examples(pairs, tokenizer, settings.prune_sentences)
    curves = timed(
        "pruning",
        pruning_curves,
        model,
        tokenizer,
        prune_examples,
        references,
        pruning_order(scores),
        settings.prune_points,
        settings.random_orders,
        settings.seed,
        settings.batch_size,
    )
    map_examples, _ = corpus_examples(pairs, tokenizer, settings.map_sentences)
    maps = timed("maps", head_maps, model, tokenizer, map_examples, settings.batch_size)
    record = {
        **{name: value for name, value in vars(settings).items()},
        "source": source,
        "seconds": seconds,
        "examples": {
            "roles": len(role_examples),
            "importance": len(importance_examples),
            "pruning": len(prune_examples),
            "maps": len(map_examples),
        },
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "torch_threads": torch.get_num_threads(),
    }
    return CorpusHeads(
        weights_hash(model),
        record,
        stats,
        {kind: role_labels(stats[kind]) for kind in KINDS},
        importance,
        scores,
        curves,
        maps,
    )
