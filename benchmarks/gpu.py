"""GPU part: training throughput (tokens/s) and model FLOPs utilisation (MFU) of a configuration.

Steps as `model.training.train` takes them: bf16 autocast, label-smoothed loss (`model.training.loss.batch_loss`),
backward, fused Adam, zero_grad; torch.compile on by default. Batches are synthetic (random ids,
no padding) of `max_tokens` source+target tokens, so every counted FLOP is useful work.

Model FLOPs of one training step (forward 2, backward 4 per multiply-add; the usual 6N rule, but
per side, because source tokens only pass through the encoder and only target tokens through the
decoder and the output projection):
    6 * (N_enc * S + (N_dec + V * d) * T) * B                       matmuls with weights
  + 12 * d * (L_enc * S^2 + L_dec * (T^2 + T * S)) * B              QK^T and AV (full, not halved)
N_enc / N_dec are the encoder / decoder layer parameters, V * d the shared embedding used as the
pre-softmax projection (3.4). MFU = model FLOPs per second / peak FLOP/s (flag, default H100 SXM
dense bf16 989 TFLOP/s).
"""

from __future__ import annotations

import time

import torch

from model.training.loss import batch_loss
from model.core.transformer import Transformer

H100_SXM_BF16_DENSE = 989e12


def step_flops(model: Transformer, batch: int, src_len: int, tgt_len: int) -> float:
    """Model FLOPs (forward + backward) of one training step on a (batch, src_len) -> (batch, tgt_len) batch."""
    config = model.config
    n_enc = sum(p.numel() for p in model.encoder_layers.parameters())
    n_dec = sum(p.numel() for p in model.decoder_layers.parameters())
    projection = config.vocab_size * config.d_model
    dense = 6 * (n_enc * src_len + (n_dec + projection) * tgt_len)
    attention = (
        12
        * config.d_model
        * (config.n_encoder_layers * src_len**2 + config.n_decoder_layers * (tgt_len**2 + tgt_len * src_len))
    )
    return float(batch * (dense + attention))


def measure(
    config,
    device: str = "cuda",
    steps: int = 50,
    warmup: int = 10,
    max_tokens: int = 8000,
    seq_len: int = 32,
    peak_flops: float = H100_SXM_BF16_DENSE,
    compile_model: bool = True,
    bf16: bool = True,
) -> dict:
    """Time `steps` training steps after `warmup` on `device` (CUDA normally; the CPU for smoke tests)."""
    if device == "cuda" and not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}
    torch.manual_seed(0)
    model = Transformer(config).to(device).train()
    cuda = device.startswith("cuda")
    optimizer = torch.optim.Adam(
        model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9, **({"fused": True} if cuda else {})
    )
    training_model = torch.compile(model) if compile_model else model
    batch = max(1, max_tokens // (2 * seq_len))
    low = max(config.pad_id, config.bos_id, config.eos_id, config.unk_id) + 1  # no special ids in the data

    def random_ids(length: int) -> torch.Tensor:
        return torch.randint(low, config.vocab_size, (batch, length), device=device)

    src, tgt_in, labels = random_ids(seq_len), random_ids(seq_len), random_ids(seq_len)

    def train_step() -> None:
        loss_sum, tokens = batch_loss(training_model, src, tgt_in, labels, config.pad_id, 0.1, bf16)
        (loss_sum / max(tokens, 1)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    for _ in range(warmup):
        train_step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(steps):
        train_step()
    sync()
    seconds = time.perf_counter() - start
    tokens_per_step = batch * 2 * seq_len
    flops_per_step = step_flops(model, batch, seq_len, seq_len)
    achieved = flops_per_step * steps / seconds
    return {
        "device": torch.cuda.get_device_name() if cuda else device,
        "parameters": model.num_parameters(),
        "batch": batch,
        "src_len": seq_len,
        "tgt_len": seq_len,
        "compile": compile_model,
        "bf16": bf16,
        "steps": steps,
        "step_ms": round(seconds / steps * 1000, 2),
        "tokens_per_s": round(tokens_per_step * steps / seconds),
        "model_tflops_per_s": round(achieved / 1e12, 2),
        "peak_tflops": round(peak_flops / 1e12, 1),
        "mfu": float(f"{achieved / peak_flops:.4g}"),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
    }
