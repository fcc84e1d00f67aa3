"""Training speed on the CPU: tokens/s and MFU of the full training step (section 5) in several variants.

A step is what `model.training.train` runs: forward, label-smoothed loss, backward, the learning rate,
Adam. Batches are real: sentence pairs sampled from the training sources, tokenized with the shipped
tokenizer, both directions, grouped by `model.training.data.token_batches` into ~--max-tokens batches.
Variants (each its own model copy, same initial weights, its own Adam):
- eager / torch.compile (CPU inductor, `dynamic=True` as train.py uses it; the compile and warm-up
  time is measured apart and left out of tokens/s);
- 1 or 2 threads (`torch.set_num_threads`);
- --max-tokens 2000 / 4000 / 8000 per batch;
- length-bucketed batches (train.py's) or random batches of the same budget: their padding share;
- float32, or bf16 autocast ("bf16 ..." variants: what train.py's --precision auto picks on a CPU with native
  bf16, model/training/precision.py; emulated and slow on one without).
The variants run round-robin, one step each in turn, so a load that comes and goes on a shared
machine falls on all of them alike. tokens/s counts real (not padding) source + target tokens;
MFU = model FLOPs of the real tokens (model/training/flops.py) / time / the float32 peak of the cores used (for a
bf16 variant too: its share of the float32 peak)
(`cpu_peak_flops`: 2 FMA units x SIMD lanes x 2 FLOPs x the clock in /proc/cpuinfo, per core).

    python -m benchmarks.train_speed                                  # the shipped shape, ~5 minutes
    python -m benchmarks.train_speed --d-model 64 --layers 1 --d-ff 128 --steps 2 --pairs 600   # a smoke run
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model import SubwordTokenizer, Transformer, TransformerConfig  # noqa: E402
from model.training.data import collate, cut_into_batches, make_examples, read_sources, token_batches  # noqa: E402
from model.training.flops import cpu_clock_hz, cpu_fp32_lanes, cpu_peak_flops, training_flops  # noqa: E402
from model.training.precision import cpu_flags, cpu_model  # noqa: E402
from model.training.loss import learning_rate, summed_loss  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SOURCES = [str(DATA / "multi30k" / "train")] * 4 + [str(DATA / "tatoeba" / "eng-deu.large.tsv")]  # the CPU recipe's mix
VARIANTS = {  # name -> (compiled, threads, max_tokens, bucketed, bf16 autocast)
    "eager 1t 4000": (False, 1, 4000, True, False),
    "compile 1t 4000": (True, 1, 4000, True, False),
    "eager 2t 4000": (False, 2, 4000, True, False),
    "compile 2t 4000": (True, 2, 4000, True, False),
    "eager 1t 2000": (False, 1, 2000, True, False),
    "eager 1t 8000": (False, 1, 8000, True, False),
    "eager 1t 4000 random": (False, 1, 4000, False, False),
    "bf16 eager 1t 4000": (False, 1, 4000, True, True),
    "bf16 compile 1t 4000": (True, 1, 4000, True, True),
    "bf16 eager 2t 4000": (False, 2, 4000, True, True),
}


def random_batches(examples: list, max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Examples in random order cut into batches under the same padded budget as token_batches."""
    order = list(range(len(examples)))
    rng.shuffle(order)
    return cut_into_batches(examples, order, max_tokens)


def tensor_batches(examples: list, batches: list[list[int]], config: TransformerConfig) -> list[dict]:
    """Padded tensors of each batch with their real token counts and model FLOPs."""
    result = []
    for indices in batches:
        src, tgt_in, labels = collate(examples, indices, config.pad_id)  # (B, S), (B, T), (B, T)
        source_lengths, target_lengths = (src != config.pad_id).sum(1), (labels != config.pad_id).sum(1)
        result.append(
            {
                "src": src,
                "tgt_in": tgt_in,
                "labels": labels,
                "real": int(source_lengths.sum() + target_lengths.sum()),
                "padded": src.numel() + labels.numel(),
                "flops": training_flops(config, source_lengths, target_lengths),
            }
        )
    return result


class Variant:
    """One way to train: a network over its own model copy, its Adam, and what each timed step took."""

    def __init__(
        self, name: str, model: Transformer, compiled: bool, threads: int, batches: list[dict], bf16: bool = False
    ):
        self.name, self.model, self.compiled, self.threads, self.batches = name, model, compiled, threads, batches
        self.bf16 = bf16  # bf16 autocast, as train.py's --precision auto picks on a CPU with native bf16
        self.network = torch.compile(model, dynamic=True) if compiled else model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
        self.step_count, self.warmup_seconds = 0, 0.0
        self.timed: list[dict] = []  # per step: seconds, cpu seconds, real and padded tokens, flops, loss

    def step(self, batch: dict) -> dict:
        """One training step as train.py takes it; -> its timings and loss."""
        torch.set_num_threads(self.threads)
        start, cpu_start = time.perf_counter(), time.process_time()
        config = self.model.config
        loss_sum = summed_loss(
            self.network, batch["src"], batch["tgt_in"], batch["labels"], config.pad_id, 0.1, self.bf16
        )
        target_tokens = int((batch["labels"] != config.pad_id).sum())
        (loss_sum / target_tokens).backward()
        self.step_count += 1
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.step_count, config.d_model, 600, 0.5)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return {
            "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu_start,
            "real": batch["real"],
            "padded": batch["padded"],
            "flops": batch["flops"],
            "loss": float(loss_sum.detach()) / target_tokens,
        }

    def warm_up(self, count: int) -> None:
        """The first steps (compilation, allocator, kernels), timed apart and not counted."""
        for batch in self.batches[:count]:
            self.warmup_seconds += self.step(batch)["seconds"]

    def summary(self, peak_per_core: float | None) -> dict:
        seconds = sum(s["seconds"] for s in self.timed)
        real, padded, flops = (sum(s[key] for s in self.timed) for key in ("real", "padded", "flops"))
        per_step = [s["real"] / s["seconds"] for s in self.timed]
        peak = peak_per_core * self.threads if peak_per_core else None
        return {
            "variant": self.name,
            "steps": len(self.timed),
            "tokens_per_second": round(real / seconds),
            "median_step_tokens_per_second": round(statistics.median(per_step)),
            "tokens_per_cpu_second": round(real / sum(s["cpu_seconds"] for s in self.timed)),
            "real_tokens_per_batch": round(real / len(self.timed)),
            "padding_share": round(1 - real / padded, 3),
            "mfu": round(flops / seconds / peak, 4) if peak else None,
            "mfu_per_cpu_second": round(flops / sum(s["cpu_seconds"] for s in self.timed) / peak, 4) if peak else None,
            "warmup_seconds": round(self.warmup_seconds, 1),
            "compiled": self.compiled,
            "threads": self.threads,
            "bf16": self.bf16,
        }


def build_variants(args, tokenizer: SubwordTokenizer, examples: list) -> list[Variant]:
    torch.manual_seed(0)
    config = TransformerConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=args.d_model,
        n_heads=args.heads,
        n_encoder_layers=args.layers,
        n_decoder_layers=args.layers,
        d_ff=args.d_ff,
    )
    config = dataclasses.replace(config, dropout=args.dropout, attention_dropout=args.dropout)
    base = Transformer(config).train()
    variants = []
    for name in args.variants:
        compiled, threads, max_tokens, bucketed, bf16 = VARIANTS[name]
        rng = random.Random(args.seed)
        batches = token_batches(examples, max_tokens, rng) if bucketed else random_batches(examples, max_tokens, rng)
        needed = args.warmup + args.steps
        if len(batches) < needed:
            raise SystemExit(f"{name}: {len(batches)} batches, {needed} needed: raise --pairs")
        variants.append(
            Variant(
                name, copy.deepcopy(base), compiled, threads, tensor_batches(examples, batches[:needed], config), bf16
            )
        )
    return variants


def machine() -> dict:
    flags = cpu_flags()
    return {
        "cpu": cpu_model(),
        "clock_hz": cpu_clock_hz(),
        "fp32_lanes": cpu_fp32_lanes(flags),
        "simd_flags": sorted(f for f in flags if f.startswith(("avx", "fma", "amx"))),
        "peak_flops_per_core": cpu_peak_flops(1, flags=flags),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cores": torch.get_num_threads(),
    }


def run(args):
    """Warm every variant up, then time them round-robin; yields the results so far after each round."""
    tokenizer = SubwordTokenizer.load(args.tokenizer)
    pairs = read_sources(args.data)
    pairs = random.Random(args.seed).sample(pairs, min(args.pairs, len(pairs)))
    examples = make_examples(pairs, tokenizer, 100)
    variants = build_variants(args, tokenizer, examples)
    for variant in variants:
        variant.warm_up(args.warmup)
        print(f"{variant.name}: {args.warmup} warm-up steps in {variant.warmup_seconds:.1f} s", flush=True)
    info = machine()
    config = {
        "d_model": args.d_model,
        "heads": args.heads,
        "layers": args.layers,
        "d_ff": args.d_ff,
        "vocab": tokenizer.vocab_size,
        "dropout": args.dropout,
        "pairs": len(pairs),
        "warmup_steps": args.warmup,
    }
    for index in range(args.warmup, args.warmup + args.steps):  # round-robin: each variant's next batch in turn
        for variant in variants:
            variant.timed.append(variant.step(variant.batches[index]))
        yield {
            "machine": info,
            "config": {**config, "timed_steps": len(variants[0].timed)},
            "load_average": Path("/proc/loadavg").read_text().split()[:3],
            "losses": {v.name: [round(s["loss"], 4) for s in v.timed] for v in variants},
            "rows": [variant.summary(info["peak_flops_per_core"]) for variant in variants],
        }


def table(result: dict) -> str:
    """The rows as a Markdown table."""
    header = (
        "| variant | tokens/s | median step tokens/s | tokens per CPU-second | real tokens/batch | padding "
        "| MFU | warm-up s |"
    )
    lines = [header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in result["rows"]:
        mfu = f"{row['mfu']:.1%}" if row["mfu"] is not None else "n/a"
        lines.append(
            f"| {row['variant']} | {row['tokens_per_second']:,} | {row['median_step_tokens_per_second']:,} | "
            f"{row['tokens_per_cpu_second']:,} | {row['real_tokens_per_batch']:,} | "
            f"{row['padding_share']:.1%} | {mfu} | {row['warmup_seconds']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=SOURCES, help="training sources to sample pairs from")
    parser.add_argument("--tokenizer", default=str(ROOT / "checkpoints" / "de-en-small" / "tokenizer.json"))
    parser.add_argument("--pairs", type=int, default=6000, help="sentence pairs sampled (x2 directions)")
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    parser.add_argument("--d-ff", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=8, help="timed steps per variant")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per variant (compilation included)")
    parser.add_argument(
        "--dropout", type=float, default=0.1, help="dropout and attention dropout (0: losses comparable)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--out", help="write the JSON results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for result in run(args):  # after every round, so a run cut short keeps what it measured
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    info = result["machine"]
    peak = f"{info['peak_flops_per_core'] / 1e9:.1f} GFLOP/s" if info["peak_flops_per_core"] else "unknown (no clock)"
    print(
        f"CPU: {info['cpu']}; clock {(info['clock_hz'] or 0) / 1e9:.3f} GHz; {info['fp32_lanes']} fp32 lanes "
        f"({' '.join(info['simd_flags'])}); peak per core 2 FMA x {info['fp32_lanes']} lanes x 2 x clock = {peak}; "
        f"torch {info['torch']}; load average {' '.join(result['load_average'])}"
    )
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
