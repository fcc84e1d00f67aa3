"""Training throughput on this machine: the fused attention path against the written-out one.

Times full training steps (forward, label-smoothed loss, backward, Adam; section 5) of a small but
real configuration on synthetic batches with Multi30k-like sentence lengths, and prints tokens/s
(source + target, padding excluded) for
- written-out: Transformer.encode / decode with output_attentions=True (what the trace runs),
- fused:       Transformer.forward, through F.scaled_dot_product_attention (what training runs),
- fused bf16:  the same under bf16 autocast (what `--precision bf16` runs),
with the CPU model and whether it has native bf16 (/proc/cpuinfo). The modes alternate step by
step on the same batches and each is reported as the median tokens/s and the median ratio to the
first mode on the same batch, so a busy shared machine biases no mode.

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
from model.core.masks import decoder_mask, padding_mask  # noqa: E402
from model.training.precision import choose_precision, cpu_flags, cpu_model  # noqa: E402
from model.training.train import batch_loss  # noqa: E402


class WrittenOut(torch.nn.Module):
    """Transformer.forward with the trace's written-out attention (output_attentions=True)."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_mask = padding_mask(src, self.model.config.pad_id)
        memory = self.model.encode(src, src_mask, output_attentions=True).memory
        hidden = self.model.decode(tgt, memory, src_mask, decoder_mask(tgt, self.model.config.pad_id),
                                   output_attentions=True).hidden
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


class Mode:
    """One way to train: a network over the shared model, its own Adam, and per-step timings."""

    def __init__(self, network, model: Transformer, autocast: bool):
        self.network, self.model, self.autocast = network, model, autocast
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
        self.speeds: list[float] = []  # tokens/s of each timed step

    def step(self, batch: tuple, timed: bool = True) -> None:
        src, tgt_in, labels = batch
        pad_id = self.model.config.pad_id
        self.network.train()
        start = time.perf_counter()
        loss, count = batch_loss(self.network, src, tgt_in, labels, pad_id, 0.1, self.autocast)
        (loss / count).backward()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        if timed:
            self.speeds.append((int((src != pad_id).sum()) + count) / (time.perf_counter() - start))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    parser.add_argument("--d-ff", type=int, default=1024)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--sentences", type=int, default=64, help="sentences per batch")
    parser.add_argument("--steps", type=int, default=6, help="batches, each timed once per mode and round")
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
    modes = {name: Mode(networks[name][0], model, networks[name][1]) for name in args.modes}
    for mode in modes.values():
        mode.step(batches[0], timed=False)  # warm-up: allocator, kernels
    # Modes alternate step by step on the same batches, so load from other processes on a shared
    # machine falls on all of them alike; each mode is compared with the first on the same batch.
    for _ in range(args.rounds):
        for batch in batches:
            for mode in modes.values():
                mode.step(batch)
    first = modes[args.modes[0]].speeds
    for name, mode in modes.items():
        ratio = statistics.median(b / a for a, b in zip(first, mode.speeds))
        print(f"{name:12s} {statistics.median(mode.speeds):10,.0f} tokens/s median of {len(mode.speeds)} steps  "
              f"(paired ratio to {args.modes[0]}: {ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
