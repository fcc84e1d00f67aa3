"""An independent reference forward pass of the Transformer (sections 3.1-3.5), for provenance tests.

Everything here is written from the paper's formulas and reads only the module's parameters
(`embedding.weight`, `q_proj k_proj v_proj out_proj`, `linear1 linear2`, `norm1..3`): it never
calls the model's attention, layer, embed or project code. It runs one unbatched sentence in
float64, head by head, so a fault in head splitting, layer order, masking, scaling, residuals,
layer norm, positional encodings or the tied projection shows up as a different number.
"""

from __future__ import annotations

import copy
import math
from typing import NamedTuple

import torch
from torch import nn

from model.core.config import TransformerConfig
from model.core.transformer import Transformer


def perturbed_model(config: TransformerConfig, seed: int) -> Transformer:
    """A Transformer whose every parameter is a seeded random draw, biases and norms included.

    Default initialisation has zero biases and LayerNorm (1, 0): a fault that dropped a bias or
    added a stray norm would change nothing. Parameters are filled in sorted-name order from one
    generator, so the weights do not depend on module construction order.
    """
    model = Transformer(config)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in sorted(model.named_parameters()):
            if name.endswith("norm1.weight") or name.endswith("norm2.weight") or name.endswith("norm3.weight"):
                parameter.copy_(torch.rand(parameter.shape, generator=generator) + 0.5)  # gains in [0.5, 1.5)
            elif parameter.dim() == 1:
                parameter.copy_((torch.rand(parameter.shape, generator=generator) - 0.5) * 0.4)
            else:
                fan = parameter.shape[-1]
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * (1.5 / math.sqrt(fan)))
        model.embedding.weight[config.pad_id].zero_()  # nn.Embedding(padding_idx) keeps this row 0
    return model.eval()


def sinusoid_table(length: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), section 3.5, by loops. -> (T, d)."""
    table = torch.zeros(length, d_model, dtype=torch.float64)
    for pos in range(length):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            table[pos, 2 * i] = math.sin(angle)
            table[pos, 2 * i + 1] = math.cos(angle)
    return table


def embed(model: Transformer, ids: list[int], positions: bool = True) -> torch.Tensor:
    """E[ids] * sqrt(d_model) + PE, sections 3.4-3.5. -> (T, d) float64."""
    d_model = model.config.d_model
    x = model.embedding.weight.detach().double()[torch.tensor(ids)] * math.sqrt(d_model)
    return x + sinusoid_table(len(ids), d_model) if positions else x


def linear(module: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    return x @ module.weight.detach().double().T + module.bias.detach().double()


def layer_norm(module: nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(
        variance + module.eps
    ) * module.weight.detach().double() + module.bias.detach().double()


class Attention(NamedTuple):
    output: torch.Tensor  # (Tq, d)
    weights: torch.Tensor  # (h, Tq, Tk)
    scores: torch.Tensor  # (h, Tq, Tk), before the mask
    queries: torch.Tensor  # (h, Tq, d_head): Q W_i^Q of each head
    keys: torch.Tensor  # (h, Tk, d_head): K W_i^K of each head


def attention(
    module,
    n_heads: int,
    queries: torch.Tensor,
    keys: torch.Tensor,
    allowed: torch.Tensor,
    heads_off: frozenset = frozenset(),
) -> Attention:
    """Multi-head attention of 3.2.2 head by head; allowed (Tq, Tk) True = may attend.

    heads_off: head indices whose output is zeroed before W^O (the ablation of model/decoding/ablation.py).
    """
    d_head = module.q_proj.weight.shape[0] // n_heads
    q, k, v = linear(module.q_proj, queries), linear(module.k_proj, keys), linear(module.v_proj, keys)
    outputs, weights, scores = [], [], []
    for head in range(n_heads):
        part = slice(head * d_head, (head + 1) * d_head)
        score = q[:, part] @ k[:, part].T / math.sqrt(d_head)  # (Tq, Tk)
        weight = torch.softmax(score.masked_fill(~allowed, float("-inf")), dim=-1)
        out = weight @ v[:, part]  # (Tq, d_head)
        outputs.append(torch.zeros_like(out) if head in heads_off else out)
        weights.append(weight)
        scores.append(score)
    heads = lambda x: x.reshape(len(x), n_heads, d_head).transpose(0, 1)  # noqa: E731  (T, d) -> (h, T, d_head)
    output = linear(module.out_proj, torch.cat(outputs, dim=-1))
    return Attention(output, torch.stack(weights), torch.stack(scores), heads(q), heads(k))


def feed_forward(module, x: torch.Tensor) -> torch.Tensor:
    return linear(module.linear2, torch.relu(linear(module.linear1, x)))


class Reference(NamedTuple):
    memory: torch.Tensor  # (S, d)
    encoder: list[Attention]  # one per encoder layer
    decoder_self: list[Attention]  # one per decoder layer
    cross: list[Attention]
    layer_hiddens: list[torch.Tensor]  # decoder layer outputs, (T, d) each
    logits: torch.Tensor  # (T, V): last hidden @ E^T (tied projection, 3.4)


def forward(
    model: Transformer,
    source: list[int],
    target: list[int],
    source_allowed: torch.Tensor | None = None,
    target_allowed: torch.Tensor | None = None,
    heads_off: dict | None = None,
    positions: bool = True,
) -> Reference:
    """Post-LN encoder-decoder of Figure 1 on one sentence, float64, without dropout.

    source_allowed (S,): real source keys (default all); target_allowed (T, T): default causal.
    heads_off: {"encoder"|"decoder_self"|"cross": {(layer, head), ...}}.
    """
    heads_off = heads_off or {}
    off = lambda kind, layer: frozenset(h for l, h in heads_off.get(kind, ()) if l == layer)  # noqa: E731
    S, T, h = len(source), len(target), model.config.n_heads
    source_allowed = torch.ones(S, dtype=torch.bool) if source_allowed is None else source_allowed
    target_allowed = torch.ones(T, T, dtype=torch.bool).tril() if target_allowed is None else target_allowed
    x = embed(model, source, positions)
    encoder = []
    for index, layer in enumerate(model.encoder_layers):
        a = attention(layer.self_attention, h, x, x, source_allowed.expand(S, S), off("encoder", index))
        x = layer_norm(layer.norm1, x + a.output)
        x = layer_norm(layer.norm2, x + feed_forward(layer.feed_forward, x))
        encoder.append(a)
    memory = x
    y = embed(model, target, positions)
    decoder_self, cross, hiddens = [], [], []
    for index, layer in enumerate(model.decoder_layers):
        s = attention(layer.self_attention, h, y, y, target_allowed, off("decoder_self", index))
        y = layer_norm(layer.norm1, y + s.output)
        c = attention(layer.cross_attention, h, y, memory, source_allowed.expand(T, S), off("cross", index))
        y = layer_norm(layer.norm2, y + c.output)
        y = layer_norm(layer.norm3, y + feed_forward(layer.feed_forward, y))
        decoder_self.append(s)
        cross.append(c)
        hiddens.append(y)
    logits = y @ model.embedding.weight.detach().double().T
    return Reference(memory, encoder, decoder_self, cross, hiddens, logits)


def sequence_log_prob(model: Transformer, source: list[int], ids: list[int]) -> float:
    """log P(ids | source) = sum_t log softmax(logits_t)[ids[t]], teacher-forced on [BOS] + ids[:-1].

    The target mask is causal only, as in cached decoding (a generated [PAD] is not masked).
    """
    reference = forward(model, source, [model.config.bos_id, *ids[:-1]])
    log_probs = torch.log_softmax(reference.logits, dim=-1)
    return float(sum(log_probs[t, token] for t, token in enumerate(ids)))


def without_head(model: Transformer, kind: str, layer: int, head: int) -> Transformer:
    """A deep copy in which one head's slice of W^O's input is zeroed: out_proj.weight[:, head cols] = 0."""
    clone = copy.deepcopy(model)
    stack = clone.encoder_layers if kind == "encoder" else clone.decoder_layers
    module = stack[layer].cross_attention if kind == "cross" else stack[layer].self_attention
    d_head = clone.config.d_model // clone.config.n_heads
    with torch.no_grad():
        module.out_proj.weight[:, head * d_head : (head + 1) * d_head] = 0.0
    return clone


# --------------------------------------------------------------------------- views
def train_copy_model(tokenizer, pairs, *, n_encoder_layers: int = 2, steps: int = 80, seed: int = 0) -> Transformer:
    """A tiny Transformer trained to copy the fixture sentences (both directions' framing), so that its
    greedy output ends with [EOS]: a few seconds on one CPU thread (see tests/model/decoding/test_finished_sentence.py).

    Two layers of each stack and four heads, so a view that reverses layers or heads shows other numbers.
    """
    import torch.nn.functional as F

    from model.decoding.greedy import pad_batch

    config = TransformerConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=32,
        n_heads=4,
        n_encoder_layers=n_encoder_layers,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        attention_dropout=0.0,
        max_positions=64,
    )
    torch.manual_seed(seed)
    model = Transformer(config)
    texts = [text for pair in pairs for text in pair]
    src = pad_batch([tokenizer.encode_source(t, lang) for t in texts for lang in ("en", "de")], config.pad_id)
    tgt = pad_batch([tokenizer.encode_target(t) for t in texts for _ in range(2)], config.pad_id)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-9)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(steps):
            logits = model(src, tgt[:, :-1])  # (B, T, V), teacher forcing
            loss = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=config.pad_id)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval()


def decode_plotly(value):
    """Plotly JSON with numpy arrays written as {"dtype", "bdata", "shape"} -> the same with numpy arrays."""
    import base64

    import numpy as np

    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            shape = value.get("shape")
            return array.reshape([int(n) for n in str(shape).split(",")]) if shape else array
        return {key: decode_plotly(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_plotly(item) for item in value]
    return value
