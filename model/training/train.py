"""Training, section 5 of the paper: Adam, warm-up + inverse-square-root learning rate, label
smoothing, dropout, token-count batches; attention through PyTorch's fused kernel (the written-out
path is for traces only); bf16 autocast where the hardware has native bf16 (`--precision auto`,
model/training/precision.py); on a GPU a fused optimizer, torch.compile and several GPUs through torchrun
(DistributedDataParallel).

    python -m model.training.train --data ../shared/data/multi30k/train ../shared/data/tatoeba/eng-deu.tsv \
        --val ../shared/data/multi30k/val --out runs/base
    torchrun --nproc_per_node 8 -m model.training.train ...        # several GPUs, same script

The run directory holds `best/` (a checkpoint directory: the best validation BLEU so far),
`last/` (weights + optimizer state, for --resume), `training_log.json` (per-step loss and
learning rate, the validation curve, the precision used and why), which is copied into each saved
checkpoint, and `film.npz`, the training film (model/training/film.py): the attention of two probe
sentences at every evaluation.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import sys
import threading
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from model.training import film
from model.core.config import TransformerConfig
from model.training.data import DataError, Example, collate, make_examples, read_sources, token_batches
from model.training.evaluate import score, translate_batch
from model.training.flops import peak_flops, training_flops
from model.training.precision import PRECISIONS, choose_precision, cpu_flags
from model.training.run_files import (LOG_FILE, STATE_FILE, empty_log, git_commit, load_training_state, save_run_checkpoint,
                        save_training_state)
from model.text.tokenizer import SubwordTokenizer
from model.core.transformer import Transformer


def learning_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), section 5.3 (times a factor)."""
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m model.training.train", description=__doc__.splitlines()[0])
    data = parser.add_argument_group("data")
    data.add_argument("--data", nargs="+", required=True,
                      help="training sources: PREFIX (PREFIX.de + PREFIX.en), FILE.tsv (English<TAB>German) or hf:DATASET[:CONFIG]")
    data.add_argument("--val", nargs="+", default=[],
                      help="validation sources (same formats), used for model selection: BLEU is the mean over them")
    data.add_argument("--tokenizer", help="reuse this tokenizer.json instead of training one")
    data.add_argument("--vocab-size", type=int, default=8000)
    data.add_argument("--max-length", type=int, default=100, help="drop pairs with a side longer than this many subwords")
    model = parser.add_argument_group("model (TransformerConfig)")
    model.add_argument("--d-model", type=int, default=256)
    model.add_argument("--heads", type=int, default=8)
    model.add_argument("--encoder-layers", type=int, default=6)
    model.add_argument("--decoder-layers", type=int, default=6)
    model.add_argument("--d-ff", type=int, default=1024)
    model.add_argument("--dropout", type=float, default=0.1)
    model.add_argument("--attention-dropout", type=float, default=0.1)
    model.add_argument("--max-positions", type=int, default=256)
    optim = parser.add_argument_group("optimisation")
    optim.add_argument("--max-tokens", type=int, default=8000, help="padded source+target tokens per batch (per GPU)")
    optim.add_argument("--warmup", type=int, default=4000)
    optim.add_argument("--lr-factor", type=float, default=1.0, help="multiplies the paper's learning-rate formula")
    optim.add_argument("--label-smoothing", type=float, default=0.1)
    optim.add_argument("--clip-norm", type=float, default=0.0, help="gradient clipping (0 = off, as in the paper)")
    optim.add_argument("--epochs", type=int, default=1000)
    optim.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = no limit)")
    optim.add_argument("--max-minutes", type=float, default=0.0,
                       help="stop after this much training time, evaluations not counted (0 = no limit)")
    optim.add_argument("--average-last", type=int, default=0,
                       help="at the end, also try the average of the last N evaluated weights; keep it if val BLEU is better")
    run = parser.add_argument_group("run")
    run.add_argument("--out", required=True, help="run directory")
    run.add_argument("--resume", action="store_true", help="continue from OUT/last")
    run.add_argument("--seed", type=int, default=1234)
    run.add_argument("--eval-every", type=int, default=1000, help="steps between validations")
    run.add_argument("--eval-minutes", type=float, default=0.0,
                     help="also validate after every this many minutes of training (0 = by steps only)")
    run.add_argument("--bleu-sentences", type=int, default=500, help="validation sentences per direction for BLEU")
    run.add_argument("--log-every", type=int, default=50)
    run.add_argument("--device", default="auto", help="auto, cpu, cuda")
    run.add_argument("--compile", choices=("auto", "on", "off"), default="auto", help="torch.compile (auto: on for CUDA)")
    run.add_argument("--threads", type=int, default=0,
                     help="CPU threads (0 = torch default; 1 is fastest on a small, shared CPU)")
    run.add_argument("--precision", choices=PRECISIONS, default="auto",
                     help="bf16 autocast; auto: bf16 on CUDA with bf16 support and on CPUs with AMX / "
                          "AVX-512-BF16, float32 elsewhere (the log and metrics.json say which and why)")
    run.add_argument("--film", choices=("on", "off"), default="on",
                     help=f"record the training film ({film.FILM_FILE} in OUT) at every evaluation")
    return parser


class Distributed:
    """torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK), or a single process."""

    def __init__(self, device_choice: str):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available() and device_choice in ("auto", "cuda")
        if device_choice == "cuda" and not torch.cuda.is_available():
            raise SystemExit("error: --device cuda but no CUDA device is available")
        self.device = torch.device(f"cuda:{local_rank}" if cuda else "cpu")
        if cuda:
            torch.cuda.set_device(self.device)
        if self.world > 1:
            torch.distributed.init_process_group("nccl" if cuda else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self) -> None:
        if self.world > 1:
            torch.distributed.barrier()


def summed_loss(model, src, tgt_in, labels, pad_id: int, label_smoothing: float, autocast: bool) -> torch.Tensor:
    """Label-smoothed cross-entropy (section 5.4) summed over real tokens (a tensor: no GPU sync)."""
    with torch.autocast(device_type=src.device.type, dtype=torch.bfloat16, enabled=autocast):
        logits = model(src, tgt_in)  # (B, T, V)
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=pad_id,
                           label_smoothing=label_smoothing, reduction="sum")


def batch_loss(model, src, tgt_in, labels, pad_id: int, label_smoothing: float, autocast: bool):
    """The summed loss and the number of real target tokens it is summed over."""
    return (summed_loss(model, src, tgt_in, labels, pad_id, label_smoothing, autocast),
            int((labels != pad_id).sum()))


def source_name(spec: str) -> str:
    """A short name for a data source in the log: `../multi30k/val` -> `val`, `a/holdout.tsv` -> `holdout`."""
    return Path(spec).name.removesuffix(".tsv")


@torch.no_grad()
def validate(model: Transformer, tokenizer: SubwordTokenizer, examples: list[Example], val_sets: dict[str, list],
             args, device) -> dict:
    """Validation loss (label-smoothed, like the training loss) and greedy BLEU in both directions.

    BLEU is computed on the first `--bleu-sentences` pairs of each validation source (`NAME bleu_de_en`)
    and `bleu_de_en` / `bleu_en_de` are the means over the sources, used for model selection.
    """
    model.eval()
    total, count = 0.0, 0
    for indices in token_batches(examples, args.max_tokens, random.Random(0)):
        src, tgt_in, labels = (t.to(device) for t in collate(examples, indices, model.config.pad_id))
        loss, tokens = batch_loss(model, src, tgt_in, labels, model.config.pad_id, args.label_smoothing, False)
        total, count = total + float(loss), count + tokens
    result = {"loss": total / max(count, 1)}
    for key in ("bleu_de_en", "bleu_en_de"):
        result[key] = 0.0
    for name, pairs in val_sets.items():
        subset = pairs[: args.bleu_sentences]
        for direction, (sources, references) in {
            "de-en": ([p[0] for p in subset], [p[1] for p in subset]),
            "en-de": ([p[1] for p in subset], [p[0] for p in subset]),
        }.items():
            key = f"bleu_{direction.replace('-', '_')}"
            bleu = score(translate_batch(model, tokenizer, sources, direction), references)["bleu"]
            if len(val_sets) > 1:
                result[f"{name} {key}"] = bleu
            result[key] += bleu / len(val_sets)
    model.train()
    return result


def prefetch(examples: list[Example], batches: list[list[int]], config: TransformerConfig, device: torch.device,
             depth: int = 8):
    """Yield (src, tgt_in, labels) on the device plus real source / target token counts and training FLOPs.

    A background thread pads the next batches (pinned, for asynchronous copies to a GPU) and counts
    their tokens on the CPU, so the training loop never waits for the GPU to learn a count.
    """
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    pin = device.type == "cuda"
    failure: list[BaseException] = []

    def fill() -> None:
        try:
            for indices in batches:
                src, tgt_in, labels = collate(examples, indices, config.pad_id)
                source_lengths, target_lengths = (src != config.pad_id).sum(1), (labels != config.pad_id).sum(1)
                item = (*(t.pin_memory() if pin else t for t in (src, tgt_in, labels)), int(source_lengths.sum()),
                        int(target_lengths.sum()), training_flops(config, source_lengths, target_lengths))
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as error:  # noqa: BLE001  handed to the training loop below
            failure.append(error)
        if not stop.is_set():  # the end of the batches (the loop may have stopped reading)
            ready.put(None)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    try:
        while (item := ready.get()) is not None:
            src, tgt_in, labels, *counts = item
            yield (*(t.to(device, non_blocking=True) for t in (src, tgt_in, labels)), *counts)
        if failure:
            raise failure[0]
    finally:
        stop.set()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    dist = Distributed(args.device)
    device = dist.device
    if args.threads:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    try:
        pairs = read_sources(args.data)
        val_sets = {source_name(spec): read_sources([spec]) for spec in args.val}
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.resume and (out / "last" / "tokenizer.json").exists():
        tokenizer = SubwordTokenizer.load(out / "last" / "tokenizer.json")
    elif args.tokenizer:
        tokenizer = SubwordTokenizer.load(args.tokenizer)
    else:
        tokenizer = SubwordTokenizer.train((text for pair in pairs for text in pair), vocab_size=args.vocab_size)
    config = TransformerConfig(
        vocab_size=tokenizer.vocab_size, d_model=args.d_model, n_heads=args.heads,
        n_encoder_layers=args.encoder_layers, n_decoder_layers=args.decoder_layers, d_ff=args.d_ff,
        dropout=args.dropout, attention_dropout=args.attention_dropout, max_positions=args.max_positions,
    )
    model = Transformer(config).to(device)
    cuda = device.type == "cuda"
    precision = choose_precision(args.precision, device.type, cuda and torch.cuda.is_bf16_supported(), cpu_flags())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9,
                                 **({"fused": True} if cuda else {}))
    state = {"step": 0, "epoch": 0, "batch_in_epoch": 0, "best_bleu": -1.0, "seconds": 0.0, "tokens": 0,
             "flops": 0.0, "evaluation_seconds": 0.0}
    log = empty_log()
    if args.resume and (out / "last" / STATE_FILE).exists():
        state, log = load_training_state(out / "last", model, optimizer)
        if dist.main:
            print(f"resumed from {out / 'last'} at step {state['step']}")
    log["precision"] = precision._asdict()
    if dist.main:
        print(f"precision {precision.name}: {precision.reason}")
    training_model = model
    compiled = args.compile == "on" or (args.compile == "auto" and cuda)
    if compiled:
        training_model = torch.compile(model, dynamic=True)  # batch shapes vary with length bucketing
    if dist.world > 1:
        training_model = torch.nn.parallel.DistributedDataParallel(
            training_model, device_ids=[device.index] if cuda else None)

    examples = make_examples(pairs, tokenizer, args.max_length)
    val_examples = make_examples([pair for pairs in val_sets.values() for pair in pairs], tokenizer, args.max_length)
    if dist.main:
        print(f"{len(pairs)} pairs -> {len(examples)} examples (both directions); vocab {tokenizer.vocab_size}; "
              f"{model.num_parameters() / 1e6:.2f}M parameters; device {device}; world {dist.world}")
    command = "python -m model.training.train " + " ".join(sys.argv[1:] if argv is None else argv)
    commit = git_commit()  # the code this run started from, recorded in every checkpoint it saves
    snapshots: list[dict[str, torch.Tensor]] = []

    hardware = torch.cuda.get_device_name(device) if cuda else "cpu"
    peak = peak_flops(hardware) if cuda and precision.autocast else None
    log["hardware"] = {"device": hardware, "peak_flops_per_second": peak}

    def record_speed() -> None:
        """Whole-run throughput so far: real tokens per training second and MFU (model/training/flops.py)."""
        seconds = max(state["seconds"], 1e-9)
        log["speed"] = {"training_seconds": round(state["seconds"], 1), "tokens": state["tokens"],
                        "tokens_per_second": round(state["tokens"] / seconds),
                        "model_flops": state["flops"],
                        "mfu": round(state["flops"] / seconds / peak, 4) if peak else None,
                        "evaluation_seconds": round(state.get("evaluation_seconds", 0.0), 1)}

    def evaluate_and_save() -> None:
        evaluation_start = time.time()
        record_speed()
        scores = validate(model, tokenizer, val_examples, val_sets, args, device)
        for key, value in scores.items():
            log["validation"].setdefault(key, []).append(round(value, 4))
        log["validation"]["step"].append(state["step"])
        mean_bleu = (scores["bleu_de_en"] + scores["bleu_en_de"]) / 2
        print(f"\nstep {state['step']}: val loss {scores['loss']:.3f}  BLEU de-en {scores['bleu_de_en']:.2f}  "
              f"en-de {scores['bleu_en_de']:.2f}", flush=True)
        if args.average_last:
            snapshots.append({k: v.detach().clone().cpu() for k, v in model.state_dict().items()})
            del snapshots[: -args.average_last]
        if args.film == "on":
            bleu = {"de-en": scores["bleu_de_en"], "en-de": scores["bleu_en_de"]}
            film.append(out / film.FILM_FILE, film.record_frame(model, tokenizer, state["step"], bleu))
            model.train()
        if mean_bleu > state["best_bleu"]:
            state["best_bleu"] = mean_bleu
            save_run_checkpoint(out / "best", model, tokenizer, log, state, scores, command, commit, "best")
        save_training_state(out / "last", model, optimizer, state, tokenizer, log)
        (out / LOG_FILE).write_text(json.dumps(log) + "\n", encoding="utf-8")  # the run's log, beside best/ and last/
        state["evaluation_seconds"] = state.get("evaluation_seconds", 0.0) + time.time() - evaluation_start

    model.train()
    window_tokens, window_start = 0, time.time()
    done = False
    next_evaluation_seconds = state["seconds"] + args.eval_minutes * 60
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    progress = tqdm(total=args.max_steps or None, initial=state["step"], disable=not dist.main or tqdm is None,
                    mininterval=2.0, dynamic_ncols=True) if tqdm else None
    while not done and state["epoch"] < args.epochs:
        batches = token_batches(examples, args.max_tokens, random.Random(args.seed + state["epoch"]))
        per_rank = len(batches) // dist.world
        batches = batches[dist.rank::dist.world][:per_rank]
        clock = time.time()  # training time runs from here; evaluations are taken out of it
        for src, tgt_in, labels, src_tokens, tgt_tokens, flops in prefetch(
                examples, batches[state["batch_in_epoch"]:], config, device):
            try:
                loss_sum = summed_loss(training_model, src, tgt_in, labels, config.pad_id, args.label_smoothing,
                                       precision.autocast)
            except Exception as error:  # noqa: BLE001  torch.compile failed on this machine: train eagerly
                if training_model is model or not compiled or dist.world > 1:
                    raise
                print(f"torch.compile failed ({type(error).__name__}: {error}); training without it", flush=True)
                training_model, compiled = model, False
                loss_sum = summed_loss(model, src, tgt_in, labels, config.pad_id, args.label_smoothing,
                                       precision.autocast)
            (loss_sum / max(tgt_tokens, 1)).backward()  # token counts come from the CPU copy: no GPU sync
            if args.clip_norm:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
            state["step"] += 1
            rate = learning_rate(state["step"], config.d_model, args.warmup, args.lr_factor)
            for group in optimizer.param_groups:
                group["lr"] = rate
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            state["batch_in_epoch"] += 1
            real_tokens = src_tokens + tgt_tokens
            state["tokens"] += real_tokens * dist.world
            state["flops"] += flops * dist.world
            window_tokens += real_tokens * dist.world
            if state["step"] % args.log_every == 0 and dist.main:
                loss_value = loss_sum.item() / max(tgt_tokens, 1)
                speed = window_tokens / max(time.time() - window_start, 1e-9)
                window_tokens, window_start = 0, time.time()
                for key, value in (("step", state["step"]), ("loss", round(loss_value, 4)),
                                   ("learning_rate", rate), ("tokens_per_second", round(speed))):
                    log["train"][key].append(value)
                if progress is not None:
                    progress.set_postfix_str(f"loss {loss_value:.3f}  {speed / 1000:.1f}k tok/s  lr {rate:.2e}  epoch {state['epoch']}")
            if progress is not None:
                progress.update(1)
            now = time.time()
            state["seconds"] += now - clock
            clock = now
            out_of_time = args.max_minutes and state["seconds"] > args.max_minutes * 60
            done = bool((args.max_steps and state["step"] >= args.max_steps) or out_of_time)
            if dist.world > 1:  # every rank stops together
                flag = torch.tensor(float(done), device=device)
                torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
                done = bool(flag.item())
            due = args.eval_minutes and state["seconds"] >= next_evaluation_seconds
            if state["step"] % args.eval_every == 0 or done or due:
                if cuda:
                    torch.cuda.synchronize(device)  # the steps queued so far belong to training time
                state["seconds"] += time.time() - clock
                if dist.main:
                    evaluate_and_save()
                dist.barrier()
                while args.eval_minutes and next_evaluation_seconds <= state["seconds"]:
                    next_evaluation_seconds += args.eval_minutes * 60
                window_tokens, window_start, clock = 0, time.time(), time.time()
            if done:
                break
        else:
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
    if progress is not None:
        progress.close()
    if dist.main:
        if log["validation"]["step"] and log["validation"]["step"][-1] != state["step"]:
            evaluate_and_save()
        if len(snapshots) > 1:
            try_average(model, snapshots, tokenizer, val_examples, val_sets, args, device, out, log, state, command, commit)
        print(f"done: {state['step']} steps, {state['seconds'] / 60:.1f} min, best mean val BLEU {state['best_bleu']:.2f}")
        print(f"best checkpoint: {out / 'best'}\ntraining log: {out / LOG_FILE}")
        if args.film == "on":
            print(f"training film: {out / film.FILM_FILE}")
    if dist.world > 1:
        torch.distributed.destroy_process_group()
    return 0


def try_average(model, snapshots, tokenizer, val_examples, val_sets, args, device, out, log, state, command, commit) -> None:
    """Checkpoint averaging (section 6.1 averages the last checkpoints): keep it if val BLEU improves."""
    averaged = {k: torch.stack([s[k].float() for s in snapshots]).mean(0).to(snapshots[-1][k].dtype) for k in snapshots[-1]}
    model.load_state_dict(averaged)
    scores = validate(model, tokenizer, val_examples, val_sets, args, device)
    mean_bleu = (scores["bleu_de_en"] + scores["bleu_en_de"]) / 2
    print(f"average of last {len(snapshots)}: val BLEU de-en {scores['bleu_de_en']:.2f} en-de {scores['bleu_en_de']:.2f}")
    if mean_bleu > state["best_bleu"]:
        state["best_bleu"] = mean_bleu
        save_run_checkpoint(out / "best", model, tokenizer, log, state, scores, command, commit,
                            f"average of last {len(snapshots)}")


if __name__ == "__main__":
    sys.exit(main())
