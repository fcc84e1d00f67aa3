"""Training throughput on this machine: the fused attention path against the written-out one.

Times full training steps (forward, label-smoothed loss, backward, Adam; section 5) of a small but
real configuration on synthetic batches with Multi30k-like sentence lengths, and prints tokens/s
(source + target, padding excluded) for
- written-out: Transformer.encode / decode, the attention that returns weights (what the trace runs),
- fused:       Transformer.forward, through F.scaled_dot_product_attention (what training runs),
- fused bf16:  the same under bf16 autocast (what `--precision bf16` runs),
with the CPU model and whether it has native bf16 (/proc/cpuinfo). The modes alternate for
--rounds rounds and the median is reported, so a busy shared machine biases no mode.

    python3 scripts/train_speed.py                  # ~1 minute on 2 CPU cores
    python3 scripts/train_speed.py --steps 3 --rounds 1 --d-model 64   # a smoke run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model import Transformer, TransformerConfig  # noqa: E402
from model.masks import decoder_mask, padding_mask  # noqa: E402
from model.precision import choose_precision, cpu_flags, cpu_model  # noqa: E402
from model.train import batch_loss  # noqa: E402


class WrittenOut(torch.nn.Module):
    """Transformer.forward as it was before the fused path: the trace's written-out attention."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_mask = padding_mask(src, self.model.config.pad_id)
        memory = self.model.encode(src, src_mask).memory
        hidden = self.model.decode(tgt, memory, src_mask, decoder_mask(tgt, self.model.config.pad_id)).hidden
        return self.model.project(hidden)  # (B, T, V)


def synthetic_batches(config: TransformerConfig, n: int, sentences: int, seed: int) -> list[tuple]:
    """n batches of (src, tgt_in, labels), right-padded, 8-20 subwords per side (Multi30k-like)."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        lengths = torch.randint(8, 21, (2, sentences), generator=generator)
        width_src, width_tgt = int(lengths[0].max()) + 2, int(lengths[1].max()) + 2
        src = torch.full((sentences, width_src), config.pad_id)
        tgt = torch.full((sentences, width_tgt), config.pad_id)
        for row in range(sentences):
            s, t = int(lengths[0, row]), int(lengths[1, row])
            src[row, :s] = torch.randint(6, config.vocab_size, (s,), generator=generator)
            src[row, s] = config.eos_id
            tgt[row, 0], tgt[row, t + 1] = config.bos_id, config.eos_id
            tgt[row, 1:t + 1] = torch.randint(6, config.vocab_size, (t,), generator=generator)
        batches.append((src, tgt[:, :-1], tgt[:, 1:]))
    return batches


def tokens_per_second(network, model: Transformer, batches: list[tuple], autocast: bool) -> float:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    network.train()
    loss, _ = batch_loss(network, *batches[0], model.config.pad_id, 0.1, autocast)  # warm-up step
    loss.backward()
    optimizer.zero_grad(set_to_none=True)
    tokens, start = 0, time.perf_counter()
    for src, tgt_in, labels in batches:
        loss, count = batch_loss(network, src, tgt_in, labels, model.config.pad_id, 0.1, autocast)
        (loss / count).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        tokens += int((src != model.config.pad_id).sum()) + count
    return tokens / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    parser.add_argument("--d-ff", type=int, default=1024)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--sentences", type=int, default=64, help="sentences per batch")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--modes", nargs="+", default=["written-out", "fused", "fused-bf16"],
                        choices=["written-out", "fused", "fused-bf16"])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = TransformerConfig(vocab_size=args.vocab_size, d_model=args.d_model, n_heads=args.heads,
                               n_encoder_layers=args.layers, n_decoder_layers=args.layers, d_ff=args.d_ff)
    model = Transformer(config)
    networks = {"written-out": (WrittenOut(model), False), "fused": (model, False), "fused-bf16": (model, True)}
    batches = synthetic_batches(config, args.steps, args.sentences, seed=0)
    flags = cpu_flags()
    auto = choose_precision("auto", "cpu", False, flags)
    print(f"CPU: {cpu_model()}; torch {torch.__version__}; {args.threads} thread(s); "
          f"native bf16: {', '.join(f for f in ('amx_bf16', 'avx512_bf16') if f in flags) or 'none'}")
    print(f"--precision auto here: {auto.name} ({auto.reason})")
    print(f"config: d_model {args.d_model}, {args.heads} heads, {args.layers}+{args.layers} layers, d_ff {args.d_ff}, "
          f"vocab {args.vocab_size}, {model.num_parameters() / 1e6:.1f}M parameters; {args.sentences} sentences/batch")
    results: dict[str, list[float]] = {mode: [] for mode in args.modes}
    for _ in range(args.rounds):
        for mode in args.modes:
            network, autocast = networks[mode]
            results[mode].append(tokens_per_second(network, model, batches, autocast))
    base = statistics.median(results[args.modes[0]])
    for mode in args.modes:
        median = statistics.median(results[mode])
        runs = ", ".join(f"{value:,.0f}" for value in results[mode])
        print(f"{mode:12s} {median:10,.0f} tokens/s  ({median / base - 1:+.0%} vs {args.modes[0]}; rounds: {runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
