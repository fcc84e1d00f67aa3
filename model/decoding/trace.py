"""The trace of one translation: what its sentence's views need, as plain data.

Numpy arrays and lists of strings only (no tensors, no modules), so it can be kept in a UI
state, turned into JSON and read back without the model. Shapes follow the Hugging Face
convention: attention is [layers, heads, queries, keys].

Axes: S = source tokens (encoder input, language tag first, [EOS] last); T = decoding steps.
At step t the decoder reads target_tokens[t] (the prefix is target_tokens[:t+1]) and chooses
output_tokens[t]; target_tokens = [BOS] + output_tokens[:-1].

Only what belongs to this sentence: the positional-encoding table (a function of the config) and the
padded batch of the Masks view (this sentence beside another) are computed where they are drawn
(ui/positions.py, through the runner), not copied into every trace; so is the logit lens, a readout of every
decoder layer through the projection onto the whole vocabulary (model/analysis/logit_lens.py), computed when
its view is opened.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

ARRAY_FIELDS = {
    # name: dtype
    "candidate_ids": np.int64,
    "candidate_probs": np.float32,
    "chosen_probs": np.float32,
    "entropy": np.float32,
    "encoder_attention": np.float32,
    "decoder_self_attention": np.float32,
    "cross_attention": np.float32,
    "encoder_scores": np.float32,
    "decoder_self_scores": np.float32,
    "cross_scores": np.float32,
    "source_mask": np.bool_,
    "causal_mask": np.bool_,
    "decoder_mask": np.bool_,
    "cross_mask": np.bool_,
}


JSON_DECIMALS = 4  # precision of floats in TranslationTrace.to_json


@dataclass(frozen=True)
class AttentionKind:
    """One of the three attention kinds of Figure 1 and where the trace keeps it (3.2.3)."""

    name: str  # the one spelling used everywhere: "encoder", "decoder_self", "cross"
    label: str  # what a person reads
    weights_field: str  # trace field (L, h, Tq, Tk) of softmax weights
    scores_field: str  # trace field (L, h, Tq, Tk) of QK^T / sqrt(d_k)
    queries_field: str  # trace field naming the query tokens (rows)
    keys_field: str  # trace field naming the key tokens (columns)
    stack: str  # "encoder" or "decoder": whose layers these are
    grows_with_step: bool  # decoder kinds: rows appear as decoding proceeds

    def num_layers(self, config) -> int:
        """Layers of this kind in a model of this TransformerConfig."""
        return config.n_encoder_layers if self.stack == "encoder" else config.n_decoder_layers


ATTENTION_KINDS: dict[str, AttentionKind] = {
    kind.name: kind
    for kind in (
        AttentionKind(
            "encoder",
            "Encoder self-attention",
            "encoder_attention",
            "encoder_scores",
            "source_tokens",
            "source_tokens",
            "encoder",
            False,
        ),
        AttentionKind(
            "decoder_self",
            "Masked decoder self-attention",
            "decoder_self_attention",
            "decoder_self_scores",
            "target_tokens",
            "target_tokens",
            "decoder",
            True,
        ),
        AttentionKind(
            "cross",
            "Cross-attention (encoder → decoder)",
            "cross_attention",
            "cross_scores",
            "target_tokens",
            "source_tokens",
            "decoder",
            True,
        ),
    )
}


def attention_kind(name: str) -> AttentionKind:
    """The registered kind of this name, or ValueError listing the known ones."""
    try:
        return ATTENTION_KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown attention kind {name!r}; expected one of {', '.join(ATTENTION_KINDS)}") from None


class AttentionSlice(NamedTuple):
    """One attention kind of a trace as far as it exists at a step (see TranslationTrace.attention)."""

    kind: AttentionKind
    weights: np.ndarray  # (L, h, Tq, Tk)
    scores: np.ndarray  # (L, h, Tq, Tk), before the mask
    mask: np.ndarray  # (Tq, Tk), True = may attend
    queries: list[str]  # Tq query tokens (rows)
    keys: list[str]  # Tk key tokens (columns)


@dataclass
class TranslationTrace:
    direction: str  # "de-en" or "en-de"
    source_text: str  # the text as translated (after any cut to the source limit)
    translation: str  # detokenized greedy output
    source_tokens: list[str]  # S tokens as the tokenizer spells them
    source_ids: list[int]
    target_tokens: list[str]  # T decoder inputs, the queries of decoder attention: [BOS] y1 .. y_{T-1}
    output_tokens: list[str]  # T tokens chosen by greedy decoding: y1 .. y_T (often ending in [EOS])
    output_ids: list[int]
    candidate_tokens: list[list[str]]  # T x k: the top-k next tokens at each step, most probable first
    candidate_ids: np.ndarray  # (T, k)
    candidate_probs: np.ndarray  # (T, k) softmax probabilities
    chosen_probs: np.ndarray  # (T,) probability of the chosen token
    entropy: np.ndarray  # (T,) entropy of the next-token distribution, in bits
    encoder_attention: np.ndarray  # (L_enc, h, S, S) encoder self-attention weights
    decoder_self_attention: np.ndarray  # (L_dec, h, T, T) masked decoder self-attention weights
    cross_attention: np.ndarray  # (L_dec, h, T, S) encoder-decoder attention weights
    encoder_scores: np.ndarray  # (L_enc, h, S, S) QK^T / sqrt(d_k) before mask and softmax
    decoder_self_scores: np.ndarray  # (L_dec, h, T, T)
    cross_scores: np.ndarray  # (L_dec, h, T, S)
    source_mask: np.ndarray  # (S,) True = real token (key that may be attended)
    causal_mask: np.ndarray  # (T, T) look-ahead mask, True on and below the diagonal
    decoder_mask: np.ndarray  # (T, T) causal AND target padding: what decoder self-attention used
    cross_mask: np.ndarray  # (T, S) which source keys each target query may attend
    source_truncated: bool = False  # the source was cut to model.text.limits.MAX_SOURCE_TOKENS
    stopped_by: str = "eos"  # "eos", "eos_at_limit" (the end imposed at the length limit) or "max_length"
    forced_steps: int = 0  # the first forced_steps output tokens were imposed (branching), not chosen
    ablation: dict = dataclasses.field(default_factory=dict)  # Ablation.describe() of the run
    model: str = "own"  # which of the app's models wrote it: "own" (this project's) or "opus-mt" (model/checkpoints/catalogue.py)

    @property
    def num_steps(self) -> int:
        return len(self.output_tokens)

    def attention(self, kind: str, step: int | None = None) -> AttentionSlice:
        """Weights, scores, mask and tokens of one attention kind, limited to what exists at `step`.

        step: 0-based decoding step, or None for the whole sentence. Decoder rows stop at the query
        being decoded (and, for self-attention, so do the keys: later tokens do not exist yet), so
        the causal triangle grows. Encoder attention is the same at every step.
        """
        spec = attention_kind(kind)
        weights, scores = getattr(self, spec.weights_field), getattr(self, spec.scores_field)
        queries, keys = getattr(self, spec.queries_field), getattr(self, spec.keys_field)
        if spec.name == "encoder":
            mask = np.broadcast_to(self.source_mask, (len(queries), len(keys)))  # every query sees real keys
        else:
            mask = self.decoder_mask if spec.name == "decoder_self" else self.cross_mask
        if spec.grows_with_step and step is not None:
            rows = int(np.clip(step, 0, self.num_steps - 1)) + 1
            cols = rows if spec.name == "decoder_self" else len(keys)
            weights, scores, mask = weights[:, :, :rows, :cols], scores[:, :, :rows, :cols], mask[:rows, :cols]
            queries, keys = queries[:rows], keys[:cols]
        return AttentionSlice(spec, weights, scores, mask, list(queries), list(keys))

    def to_json(self) -> str:
        """The whole trace as JSON; floats rounded to JSON_DECIMALS decimal places.

        orjson writes the numpy arrays directly: ~100x faster and 3x smaller than json.dumps of lists,
        which matters because the app returns this for every translation.
        """
        import orjson  # here, so training (on a machine without orjson) never needs it

        data = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                rounded = np.round(value, JSON_DECIMALS).astype(np.float32) if value.dtype.kind == "f" else value
                value = np.ascontiguousarray(rounded)
            data[field.name] = value
        return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")

    @classmethod
    def from_dict(cls, data: dict) -> "TranslationTrace":
        values = dict(data)
        for name, dtype in ARRAY_FIELDS.items():
            values[name] = np.asarray(values[name], dtype=dtype)
        return cls(**values)
