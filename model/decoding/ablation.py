"""Interventions for the explorer: switch attention heads off, remove positional encodings.

Switching a head off zeroes its output (its slice of Concat(head_1..head_h), before W^O, 3.2.2),
as in "Are Sixteen Heads Really Better than One?" (Michel et al., 2019); its attention weights
are still computed and shown. Removing positional encodings (3.5) leaves the model with no
notion of order: the encoder sees a bag of tokens.

`Ablation` belongs to this analysis layer; the model core (model/core/transformer.py) takes only the
plain tensors that `Ablation.tensors` builds (its `Interventions`): (L, h) head masks and a use-positions flag.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from model.core.config import TransformerConfig
from model.core.transformer import Interventions

from model.decoding.trace import ATTENTION_KINDS  # the kinds, one spelling: "encoder", "decoder_self", "cross"


@dataclass(frozen=True)
class Ablation:
    encoder_heads: frozenset[tuple[int, int]] = frozenset()  # (layer, head), 0-based, switched off
    decoder_self_heads: frozenset[tuple[int, int]] = frozenset()
    cross_heads: frozenset[tuple[int, int]] = frozenset()
    positional_encoding: bool = True  # False: embeddings only, no PE added

    def __post_init__(self) -> None:
        for kind in ATTENTION_KINDS:
            heads = getattr(self, f"{kind}_heads")
            object.__setattr__(self, f"{kind}_heads", frozenset((int(l), int(h)) for l, h in heads))
            if any(l < 0 or h < 0 for l, h in getattr(self, f"{kind}_heads")):
                raise ValueError(f"{kind}_heads must hold non-negative (layer, head) pairs")

    @property
    def is_empty(self) -> bool:
        return self.positional_encoding and not any(getattr(self, f"{k}_heads") for k in ATTENTION_KINDS)

    def head_mask(self, kind: str, n_layers: int, n_heads: int, device=None) -> torch.Tensor | None:
        """(L, h) float mask, 0 = head off; None when no head of this kind is off."""
        heads = getattr(self, f"{kind}_heads")
        if not heads:
            return None
        mask = torch.ones(n_layers, n_heads, device=device)
        for layer, head in heads:
            if layer >= n_layers or head >= n_heads:
                raise ValueError(
                    f"{kind} head (layer {layer + 1}, head {head + 1}) does not exist "
                    f"in a model of {n_layers} layers x {n_heads} heads"
                )
            mask[layer, head] = 0.0
        return mask

    def tensors(self, config: TransformerConfig, device=None) -> Interventions:
        """The head masks and positions flag for a model of this config (ValueError for a missing head)."""
        encoder = self.head_mask("encoder", config.n_encoder_layers, config.n_heads, device)
        decoder_self = self.head_mask("decoder_self", config.n_decoder_layers, config.n_heads, device)
        cross = self.head_mask("cross", config.n_decoder_layers, config.n_heads, device)
        return Interventions(encoder, decoder_self, cross, self.positional_encoding)

    def describe(self) -> dict:
        """Plain data (JSON-ready), as a trace keeps it; `from_description` reads it back."""
        return {
            "positional_encoding": self.positional_encoding,
            **{f"{k}_heads": sorted(map(list, getattr(self, f"{k}_heads"))) for k in ATTENTION_KINDS},
        }

    @classmethod
    def from_description(cls, description: dict | None) -> Ablation:
        """The ablation a trace's `ablation` field describes (`describe`'s output; empty: the intact model)."""
        description = description or {}
        heads = {f"{k}_heads": frozenset(map(tuple, description.get(f"{k}_heads", ()))) for k in ATTENTION_KINDS}
        return cls(**heads, positional_encoding=bool(description.get("positional_encoding", True)))
