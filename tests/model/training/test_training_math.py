"""Training maths (sections 3.1, 3.4, 5.4) checked against independent computations.

- In train mode (dropout 0) our model equals `torch.nn.Transformer` fed an embedding written from
  the formula E[ids] * sqrt(d_model) + PE (3.4, 3.5) and followed by hidden @ E^T: logits and the
  gradients, including the tied embedding's, which collects both uses.
- Dropout sits where section 5.4 puts it: on each sub-layer output before the residual sum, on the
  feed-forward's inner activation and on embeddings + positions. Every dropout module (ours and
  torch's) is replaced by one deterministic mask per tensor shape, and both must still agree.
- The training loss is label-smoothed cross-entropy (5.4) that ignores [PAD], checked by hand.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from torch import nn

import provenance_fixtures as ref
from helpers import reference_transformer  # the weight copy onto nn.Transformer
from model.training import loss, train
from model.core.config import TransformerConfig

CONFIG = TransformerConfig(
    vocab_size=50,
    d_model=32,
    n_heads=4,
    n_encoder_layers=2,
    n_decoder_layers=2,
    d_ff=48,
    dropout=0.0,
    attention_dropout=0.0,
    max_positions=64,
)
P_DROP = 0.3
TOLERANCE = 1e-5  # float64 on both sides, but our PE table is computed in float32 (~1e-7 off)


def padded(rows: list[list[int]]) -> torch.Tensor:
    width = max(map(len, rows))
    return torch.tensor([row + [CONFIG.pad_id] * (width - len(row)) for row in rows])  # (B, width)


SRC = padded([[4, 9, 17, 23, 8, 2], [30, 5, 2]])  # (2, 6)
TGT = padded([[1, 12, 40, 7, 33], [1, 19, 6]])  # (2, 5): decoder inputs, [BOS] first


class FixedMask(nn.Module):
    """A stand-in for nn.Dropout(p): always the same keep-mask for a given tensor shape, scaled by
    1 / (1 - p), and a record of the shapes it was applied to."""

    def __init__(self, calls: list):
        super().__init__()
        self.calls = calls

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.append(tuple(x.shape))
        seed = sum(size * 1000**i for i, size in enumerate(x.shape))
        keep = torch.rand(x.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) >= P_DROP
        return x * keep.to(x.dtype) / (1 - P_DROP)


def replace_dropouts(module: nn.Module, calls: list, skip: str = "attention_dropout") -> None:
    """Every nn.Dropout under `module` (but attention-weight dropout, p = 0 here) becomes a FixedMask."""
    for name, child in list(module.named_modules()):
        for attribute, grandchild in list(child.named_children()):
            if isinstance(grandchild, nn.Dropout) and attribute != skip:
                setattr(child, attribute, FixedMask(calls))


def reference_logits(model, reference: nn.Transformer, embedding: torch.Tensor, dropout=None) -> torch.Tensor:
    """nn.Transformer between an independent embedding (3.4, 3.5) and the tied projection. -> (B, T, V)."""

    def embed(ids):
        x = embedding[ids] * math.sqrt(CONFIG.d_model) + ref.sinusoid_table(ids.size(1), CONFIG.d_model)
        return x if dropout is None else dropout(x)

    causal = torch.ones(TGT.size(1), TGT.size(1), dtype=torch.bool).tril()
    hidden = reference(
        embed(SRC),
        embed(TGT),
        tgt_mask=~causal,
        src_key_padding_mask=SRC == CONFIG.pad_id,
        tgt_key_padding_mask=TGT == CONFIG.pad_id,
        memory_key_padding_mask=SRC == CONFIG.pad_id,
    )
    return hidden @ embedding.T


def pair(config: TransformerConfig, seed: int = 1):
    model = ref.perturbed_model(config, seed).double().train()
    reference = reference_transformer(model).train()
    embedding = model.embedding.weight.detach().clone().requires_grad_()  # the reference's own leaf
    return model, reference, embedding


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal up to TOLERANCE relative to the larger of 1 and b's largest entry."""
    a, b = a.detach(), b.detach()
    return bool((a - b).abs().max() <= TOLERANCE * max(1.0, float(b.abs().max())))


def compare(model, reference, embedding, ours, theirs) -> None:
    real = TGT != CONFIG.pad_id
    assert close(ours[real], theirs[real])
    weights = torch.randn(ours.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    (ours * weights)[real].sum().backward()
    (theirs * weights)[real].sum().backward()
    assert close(model.embedding.weight.grad, embedding.grad)  # tied: input and output use
    for ours_layer, their_layer in zip(model.encoder_layers, reference.encoder.layers):
        grad = ours_layer.feed_forward.linear1.weight.grad
        assert close(grad, their_layer.linear1.weight.grad)
    our_q = model.decoder_layers[0].self_attention.q_proj.weight.grad
    their_q = reference.decoder.layers[0].self_attn.in_proj_weight.grad[: CONFIG.d_model]
    assert close(our_q, their_q)


def test_train_mode_without_dropout_equals_torch_transformer():
    model, reference, embedding = pair(CONFIG)
    compare(model, reference, embedding, model(SRC, TGT), reference_logits(model, reference, embedding))


def test_dropout_is_applied_to_sublayer_outputs_as_in_torch_transformer():
    config = dataclasses.replace(CONFIG, dropout=P_DROP)
    model, reference, embedding = pair(config)
    ours_calls, their_calls = [], []
    replace_dropouts(model, ours_calls)
    replace_dropouts(reference, their_calls)
    ours = model(SRC, TGT)
    theirs = reference_logits(model, reference, embedding, dropout=FixedMask(their_calls))
    assert sorted(ours_calls) == sorted(their_calls)  # as many dropouts, on tensors of the same shapes
    assert len(their_calls) == 2 + 3 * CONFIG.n_encoder_layers + 4 * CONFIG.n_decoder_layers
    without = reference_logits(model, reference_transformer(model).train(), embedding.detach())
    assert (ours - without).abs().max() > 1e-2  # the masks really drop something
    compare(model, reference, embedding, ours, theirs)


@torch.no_grad()
def test_projection_is_the_embedding_matrix_transposed():
    model = ref.perturbed_model(CONFIG, seed=2)
    hidden = torch.randn(2, 3, CONFIG.d_model)
    assert torch.allclose(model.project(hidden), hidden @ model.embedding.weight.T, atol=1e-6)
    shapes = [name for name, p in model.named_parameters() if p.shape == (CONFIG.vocab_size, CONFIG.d_model)]
    assert shapes == ["embedding.weight"]  # one matrix for input and output (3.4), no separate copy
    model.embedding.weight.mul_(2.0)
    assert torch.allclose(model.project(hidden), hidden @ model.embedding.weight.T, atol=1e-6)


# --------------------------------------------------------------------------- loss
def hand_loss(logits: torch.Tensor, labels: torch.Tensor, smoothing: float) -> tuple[float, int]:
    """sum over real labels of -sum_j q_j log p_j, q = (1 - eps) one-hot + eps / V (torch's definition)."""
    total, count = 0.0, 0
    vocab = logits.shape[-1]
    for b in range(labels.shape[0]):
        for t in range(labels.shape[1]):
            label = int(labels[b, t])
            if label == CONFIG.pad_id:
                continue
            row = [float(v) for v in logits[b, t]]
            top = max(row)
            log_z = top + math.log(sum(math.exp(v - top) for v in row))
            log_p = [v - log_z for v in row]
            total += -(1 - smoothing) * log_p[label] - smoothing / vocab * sum(log_p)
            count += 1
    return total, count


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_batch_loss_is_label_smoothed_cross_entropy_ignoring_padding(smoothing):
    generator = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 4, 7, generator=generator) * 3  # (B, T, V)
    labels = torch.tensor([[3, 5, 1, 0], [6, 0, 0, 0]])  # [PAD] = 0 at the end of each row
    logits[labels == 0] = torch.tensor([50.0, -50, -50, -50, -50, -50, -50])  # would dominate if counted
    model = lambda src, tgt_in: logits  # noqa: E731  batch_loss only calls the model
    summed, count = loss.batch_loss(
        model,
        torch.zeros(2, 3, dtype=torch.long),
        torch.zeros(2, 4, dtype=torch.long),
        labels,
        CONFIG.pad_id,
        smoothing,
        False,
    )
    expected, expected_count = hand_loss(logits, labels, smoothing)
    assert count == expected_count == 4
    assert float(summed) == pytest.approx(expected, rel=1e-5)


def test_training_uses_the_papers_label_smoothing(tmp_path, pairs, monkeypatch):
    """Section 5.4: eps_ls = 0.1 by default, passed to every training and validation loss."""
    (tmp_path / "train.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    seen, summed_loss = [], loss.summed_loss  # every training and validation loss goes through it

    def recording(model, src, tgt_in, labels, pad_id, label_smoothing, autocast):
        seen.append(label_smoothing)
        return summed_loss(model, src, tgt_in, labels, pad_id, label_smoothing, autocast)

    monkeypatch.setattr(loss, "summed_loss", recording)  # validation's batch_loss looks it up here
    monkeypatch.setattr(train, "summed_loss", recording)  # the training step looks it up here
    tiny = [
        "--d-model",
        "16",
        "--heads",
        "2",
        "--encoder-layers",
        "1",
        "--decoder-layers",
        "1",
        "--d-ff",
        "32",
        "--vocab-size",
        "400",
        "--max-tokens",
        "400",
        "--bleu-sentences",
        "2",
        "--threads",
        "1",
    ]
    assert (
        train.main(
            [
                "--data",
                str(tmp_path / "train"),
                "--val",
                str(tmp_path / "train"),
                "--out",
                str(tmp_path / "run"),
                *tiny,
                "--max-steps",
                "2",
            ]
        )
        == 0
    )
    assert len(seen) >= 3 and set(seen) == {0.1}
