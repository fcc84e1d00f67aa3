"""Head importance and pruning curves, after Michel et al. 2019, "Are Sixteen Heads Really Better
than One?".

Every head's output is multiplied by a gate xi_h (the head mask of model/decoding/ablation.py, 1 = on;
section 3.2.2's Concat(head_1..head_h) W^O with head h scaled by xi_h). Importance is the expected
absolute gradient of the teacher-forced loss with respect to the gate, at xi = 1:

    I_h = E_x | dL(x) / d xi_h |

estimated batch by batch (batch_size 1 = per sentence, the paper's definition). As in the paper,
scores are normalised per layer (l2) before heads of different layers are ranked. Pruning removes
heads, globally over all kinds and layers, in order of increasing importance, and scores the pruned
model on BLEU (greedy decoding, sacreBLEU) and loss; a random order is the baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from model.decoding.ablation import Ablation
from model.training.data import Example
from model.decoding.greedy import default_max_new_tokens, greedy_steps
from model.training.evaluate import score
from model.core.masks import decoder_mask, padding_mask
from model.text.tokenizer import SubwordTokenizer
from model.decoding.trace import ATTENTION_KINDS
from model.core.transformer import Interventions, Transformer
from .batches import Batch, batches

KINDS = tuple(ATTENTION_KINDS)  # "encoder", "decoder_self", "cross": the order of every head list here


class HeadGates(NamedTuple):
    """(L, h) gates per kind, 1 = on (the model's head masks, as float tensors that may need a gradient)."""

    encoder: torch.Tensor
    decoder_self: torch.Tensor
    cross: torch.Tensor

    @classmethod
    def ones(cls, model: Transformer, requires_grad: bool = False, dtype=None) -> "HeadGates":
        config, device = model.config, model.embedding.weight.device
        dtype = dtype or model.embedding.weight.dtype
        shapes = (
            (config.n_encoder_layers, config.n_heads),
            (config.n_decoder_layers, config.n_heads),
            (config.n_decoder_layers, config.n_heads),
        )
        return cls(*(torch.ones(shape, device=device, dtype=dtype, requires_grad=requires_grad) for shape in shapes))


def summed_loss(model: Transformer, batch: Batch, gates: HeadGates | Interventions) -> tuple[torch.Tensor, int]:
    """Teacher-forced cross-entropy summed over the batch's target tokens (no label smoothing), and their count."""
    pad = model.config.pad_id
    device = model.embedding.weight.device
    src, tgt_in, labels = (t.to(device) for t in (batch.src, batch.tgt_in, batch.labels))
    src_mask = padding_mask(src, pad)  # (B, 1, 1, S)
    heads_only = Interventions(gates.encoder, gates.decoder_self, gates.cross)  # positions always on
    memory = model.encode(src, src_mask, heads_only).memory  # (B, S, d_model)
    hidden = model.decode(tgt_in, memory, src_mask, decoder_mask(tgt_in, pad), None, heads_only).hidden  # (B, T, d)
    logits = model.project(hidden)  # (B, T, V)
    logits = logits.to(
        torch.promote_types(logits.dtype, torch.float32)
    )  # at least float32 (a double model stays double)
    loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=pad, reduction="sum")
    return loss, int((labels != pad).sum())


def head_importance(model: Transformer, examples: Sequence[Example], batch_size: int = 1) -> dict[str, np.ndarray]:
    """{kind: (L, h) float64} mean over batches of |d mean-token-loss / d gate| at gates = 1 (Michel et al.)."""
    if not examples:
        raise ValueError("no examples to estimate head importance on")
    model.eval()
    totals = [0.0, 0.0, 0.0]
    n_batches = 0
    for batch in batches(examples, batch_size, model.config.pad_id):
        gates = HeadGates.ones(model, requires_grad=True)
        loss, tokens = summed_loss(model, batch, gates)
        grads = torch.autograd.grad(loss / max(tokens, 1), list(gates))  # weights get no gradient
        totals = [total + grad.abs().double().cpu().numpy() for total, grad in zip(totals, grads)]
        n_batches += 1
    return {kind: total / n_batches for kind, total in zip(KINDS, totals)}


def normalized(importance: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each layer's scores divided by their l2 norm (Michel et al. normalise per layer before ranking)."""
    out = {}
    for kind, scores in importance.items():
        norm = np.linalg.norm(scores, axis=1, keepdims=True)  # (L, 1)
        out[kind] = scores / np.where(norm > 0, norm, 1.0)
    return out


def pruning_order(scores: dict[str, np.ndarray]) -> np.ndarray:
    """(N, 3) int rows (kind index into KINDS, layer, head), least important first (stable on ties)."""
    rows = [
        (k, l, h, float(scores[kind][l, h]))
        for k, kind in enumerate(KINDS)
        for l in range(scores[kind].shape[0])
        for h in range(scores[kind].shape[1])
    ]
    rows.sort(key=lambda row: row[3])
    return np.array([row[:3] for row in rows], dtype=np.int64).reshape(-1, 3)


def ablation_of(heads: np.ndarray) -> Ablation:
    """(k, 3) rows (kind index, layer, head) -> the Ablation switching those heads off."""
    chosen = {kind: set() for kind in KINDS}
    for k, l, h in np.asarray(heads, dtype=np.int64).reshape(-1, 3):
        chosen[KINDS[k]].add((int(l), int(h)))
    return Ablation(**{f"{kind}_heads": frozenset(pairs) for kind, pairs in chosen.items()})


@torch.no_grad()
def corpus_loss(model: Transformer, examples: Sequence[Example], ablation: Ablation, batch_size: int = 32) -> float:
    """Mean teacher-forced cross-entropy per target token (nats) with `ablation`'s heads off."""
    model.eval()
    tensors = ablation.tensors(model.config, model.embedding.weight.device)
    total, tokens = 0.0, 0
    for batch in batches(examples, batch_size, model.config.pad_id):
        loss, count = summed_loss(model, batch, tensors)
        total, tokens = total + float(loss), tokens + count
    return total / max(tokens, 1)


@torch.inference_mode()
def greedy_outputs(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    examples: Sequence[Example],
    ablation: Ablation,
    batch_size: int = 32,
) -> list[str]:
    """Greedy translations (detokenized, in the examples' order) with `ablation`'s heads off."""
    model.eval()
    config, device = model.config, model.embedding.weight.device
    tensors = ablation.tensors(config, device)
    outputs: list[str] = [""] * len(examples)
    for batch in batches(examples, batch_size, config.pad_id):
        src = batch.src.to(device)
        src_mask = padding_mask(src, config.pad_id)
        memory = model.encode(src, src_mask, tensors).memory  # (B, S, d_model)
        budget = default_max_new_tokens(src.size(1))
        ids = torch.stack(
            [step.tokens for step in greedy_steps(model, memory, src_mask, budget, ablation=tensors)], dim=1
        ).tolist()  # (B, T)
        for row, index in zip(ids, batch.indices):
            row = row[: default_max_new_tokens(len(examples[index].source))]
            outputs[index] = tokenizer.decode(row[: row.index(config.eos_id)] if config.eos_id in row else row)
    return outputs


class PruningCurves(NamedTuple):
    pruned: np.ndarray  # (K,) number of heads switched off at each point
    bleu_importance: np.ndarray  # (K,) BLEU with the least important heads off
    loss_importance: np.ndarray  # (K,) loss (nats per token) likewise
    bleu_random: np.ndarray  # (R, K) BLEU with heads off in R random orders
    loss_random: np.ndarray  # (R, K)
    order: np.ndarray  # (N, 3) the importance order (kind index, layer, head), least important first


def pruning_curves(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    examples: Sequence[Example],
    references: Sequence[str],
    order: np.ndarray,
    points: int = 9,
    random_orders: int = 1,
    seed: int = 0,
    batch_size: int = 32,
) -> PruningCurves:
    """BLEU and loss as heads are pruned in `order` and in `random_orders` random orders.

    references: one reference translation per example (its target text). points: how many pruning
    levels from 0 to all heads (evenly spaced).
    """
    n_heads = len(order)
    pruned = np.unique(np.rint(np.linspace(0, n_heads, max(points, 2))).astype(np.int64))
    rng = np.random.default_rng(seed)
    orders = [np.asarray(order)] + [np.asarray(order)[rng.permutation(n_heads)] for _ in range(random_orders)]
    bleu = np.zeros((len(orders), len(pruned)))
    loss = np.zeros((len(orders), len(pruned)))
    for o, heads in enumerate(orders):
        for i, k in enumerate(pruned):
            ablation = ablation_of(heads[:k])
            hypotheses = greedy_outputs(model, tokenizer, examples, ablation, batch_size)
            bleu[o, i] = score(hypotheses, list(references))["bleu"]
            loss[o, i] = corpus_loss(model, examples, ablation, batch_size)
    return PruningCurves(pruned, bleu[0], loss[0], bleu[1:], loss[1:], np.asarray(order, dtype=np.int64))
