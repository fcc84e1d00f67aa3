"""The one object that describes a model: the hyper-parameters of "Attention Is All You Need".

Section 3 and Table 3 of the paper name these numbers; the base model is d_model=512, h=8,
N=6 encoder and 6 decoder layers, d_ff=2048, P_drop=0.1. The config is frozen (change it with
`dataclasses.replace`), validated on creation, and saved as JSON beside the weights.

The last four fields let the same core hold a checkpoint trained elsewhere (Marian's OPUS-MT models,
model/checkpoints/marian.py); each defaults to the paper's choice.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path


FFN_ACTIVATIONS = ("relu", "swish")
POSITIONAL_LAYOUTS = ("interleaved", "halves")


class ConfigError(ValueError):
    """A config that cannot describe a working model (bad numbers, unknown or missing fields)."""


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int = 8000  # shared German+English subword vocabulary (section 3.4: one embedding)
    d_model: int = 256  # width of every sub-layer output and of the embeddings
    n_heads: int = 8  # h, parallel attention heads; d_k = d_v = d_model / h
    n_encoder_layers: int = 6  # N for the encoder stack
    n_decoder_layers: int = 6  # N for the decoder stack
    d_ff: int = 1024  # inner width of the position-wise feed-forward network (3.3)
    dropout: float = 0.1  # P_drop on sub-layer outputs and on embeddings + positions (5.4)
    attention_dropout: float = 0.1  # dropout on the attention weights
    max_positions: int = 256  # rows of the sinusoidal table (3.5); longest sequence the model sees
    pad_id: int = 0  # [PAD]: padding, never attended to
    bos_id: int = 1  # [BOS]: the decoder's start token, its first input (may be pad_id: never generated then)
    eos_id: int = 2  # [EOS]: ends source and target
    unk_id: int = 3  # [UNK]: almost never used thanks to byte fallback
    layer_norm_eps: float = 1e-5
    ffn_activation: str = "relu"  # the FFN's max(0, x) (3.3); "swish" (x * sigmoid(x)) in Marian's models
    positional_layout: str = (
        "interleaved"  # sin on even, cos on odd dimensions (3.5); "halves": all sines, then cosines
    )
    logits_bias: bool = False  # a learnt bias added to the output logits (Marian's final_logits_bias)
    force_eos_at_limit: bool = False  # decoding that reaches its length limit ends with [EOS] (Marian's forced_eos)

    def __post_init__(self) -> None:
        positive = ("vocab_size", "d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "d_ff", "max_positions")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ConfigError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if self.d_model % 2:
            raise ConfigError(f"d_model ({self.d_model}) must be even for sinusoidal positions")
        for name in ("dropout", "attention_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ConfigError(f"{name} must be in [0, 1), got {value!r}")
        if not isinstance(self.layer_norm_eps, (int, float)) or not self.layer_norm_eps > 0:
            raise ConfigError(f"layer_norm_eps must be a positive number, got {self.layer_norm_eps!r}")
        ids = {"pad_id": self.pad_id, "bos_id": self.bos_id, "eos_id": self.eos_id, "unk_id": self.unk_id}
        for name, value in ids.items():
            if not isinstance(value, int) or not 0 <= value < self.vocab_size:
                raise ConfigError(f"{name} must be an id in [0, vocab_size), got {value!r}")
        distinct = {name: value for name, value in ids.items() if name != "bos_id" or value != self.pad_id}
        if len(set(distinct.values())) != len(distinct):  # the start token may be the pad token, as in Marian
            raise ConfigError(f"special token ids must differ, got {ids}")
        for name, allowed in (("ffn_activation", FFN_ACTIVATIONS), ("positional_layout", POSITIONAL_LAYOUTS)):
            if getattr(self, name) not in allowed:
                raise ConfigError(f"{name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        for name in ("logits_bias", "force_eos_at_limit"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")

    @property
    def d_head(self) -> int:
        """d_k = d_v = d_model / h (3.2.2)."""
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        if not isinstance(data, dict):
            raise ConfigError(f"config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown config field(s): {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as error:  # wrong types that __post_init__ did not catch
            raise ConfigError(str(error)) from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "TransformerConfig":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path} is not valid JSON: {error}") from None
        return cls.from_dict(data)
