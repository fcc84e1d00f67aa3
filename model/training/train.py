"""Training, section 5 of the paper: Adam, warm-up + inverse-square-root learning rate, label
smoothing, dropout, token-count batches; attention through PyTorch's fused kernel (the written-out
path is for traces only); bf16 autocast where the hardware has native bf16 (`--precision auto`,
model/training/precision.py); on a GPU a fused optimizer, torch.compile and several GPUs through torchrun
(DistributedDataParallel).

    python -m model.training.train --data ../shared/data/multi30k/train ../shared/data/tatoeba/eng-deu.tsv \
        --val ../shared/data/multi30k/val --out runs/base
    torchrun --nproc_per_node 8 -m model.training.train ...        # several GPUs, same script
    python -m model.training.train --init-from checkpoints/de-en-small --data ... --out runs/more  # go on from a checkpoint

The run directory holds `best/` (a checkpoint directory: the best validation BLEU so far),
`last/` (weights + optimizer state, for --resume), `training_log.json` (per-step loss and
learning rate, the validation curve, the precision used and why), which is copied into each saved
checkpoint, and `film.npz`, the training film (model/training/film.py): the attention of two probe
sentences at every evaluation. --resume continues OUT/last (optimizer included); --init-from continues a
checkpoint directory in a new run directory (model/training/init_from.py).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import torch

from model.training import film
from model.training.average import average_state_dicts
from model.core.config import TransformerConfig
from model.training.data import DataError, make_examples, prefetch, read_sources, token_batches
from model.training.flops import peak_flops
from model.training.init_from import InitFromError, Start, announce, load_start
from model.training.loss import learning_rate, summed_loss
from model.training.distributed import Distributed
from model.training.options import MODEL_FLAGS, build_parser
from model.training.precision import choose_precision, cpu_flags
from model.training.validation import validate
from model.training.run_files import (
    EVALUATIONS_DIR,
    LOG_FILE,
    STATE_FILE,
    empty_log,
    git_commit,
    load_tokenizer,
    load_training_state,
    new_state,
    save_run_checkpoint,
    save_training_state,
)
from model.core.transformer import Transformer


def source_name(spec: str) -> str:
    """A short name for a data source in the log: `../multi30k/val` -> `val`, `a/holdout.tsv` -> `holdout`."""
    return Path(spec).name.removesuffix(".tsv")


class Run:
    """One training run: the model, optimiser, data and log that the loop, the evaluations and the end share
    (one object instead of closures over main's locals)."""

    def __init__(
        self, args, argv: list[str] | None, dist: Distributed, pairs: list, val_sets: dict, start: Start | None = None
    ) -> None:
        self.args, self.dist, self.device, self.val_sets = args, dist, dist.device, val_sets
        self.out = Path(args.out)
        self.tokenizer = start.checkpoint.tokenizer if start else load_tokenizer(args, self.out, pairs)
        model_fields = {field: getattr(args, field) for field in MODEL_FLAGS.values()}
        self.config = start.config if start else TransformerConfig(vocab_size=self.tokenizer.vocab_size, **model_fields)
        self.model = Transformer(self.config).to(self.device)
        self.cuda = self.device.type == "cuda"
        self.precision = choose_precision(
            args.precision, self.device.type, self.cuda and torch.cuda.is_bf16_supported(), cpu_flags()
        )
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9, **({"fused": True} if self.cuda else {})
        )
        self.state, self.log = new_state(), empty_log()
        if args.resume and (self.out / "last" / STATE_FILE).exists():
            self.state, self.log = load_training_state(self.out / "last", self.model, self.optimizer)
            self.say(f"resumed from {self.out / 'last'} at step {self.state['step']}")
        elif start:
            self.continue_from(start)
        self.log["precision"] = self.precision._asdict()
        self.say(f"precision {self.precision.name}: {self.precision.reason}")
        self.training_model, self.compiled = self.model, args.compile == "on" or (args.compile == "auto" and self.cuda)
        if self.compiled:
            self.training_model = torch.compile(self.model, dynamic=True)  # batch shapes vary with length bucketing
        if dist.world > 1:
            self.training_model = torch.nn.parallel.DistributedDataParallel(
                self.training_model, device_ids=[self.device.index] if self.cuda else None
            )
        self.examples = make_examples(pairs, self.tokenizer, args.max_length)
        self.val_examples = make_examples(
            [pair for pairs in val_sets.values() for pair in pairs], self.tokenizer, args.max_length
        )
        self.say(
            f"{len(pairs)} pairs -> {len(self.examples)} examples (both directions); vocab "
            f"{self.tokenizer.vocab_size}; {self.model.num_parameters() / 1e6:.2f}M parameters; device "
            f"{self.device}; world {dist.world}"
        )
        self.command = "python -m model.training.train " + " ".join(sys.argv[1:] if argv is None else argv)
        self.commit = git_commit()  # the code this run started from, recorded in every checkpoint it saves
        self.snapshots: list[dict[str, torch.Tensor]] = []  # the last --average-last evaluated weights
        hardware = torch.cuda.get_device_name(self.device) if self.cuda else "cpu"
        self.peak = peak_flops(hardware) if self.cuda and self.precision.autocast else None
        self.log["hardware"] = {"device": hardware, "peak_flops_per_second": self.peak}

    def say(self, text: str) -> None:
        if self.dist.main:
            print(text)

    def continue_from(self, start: Start) -> None:
        """--init-from: the checkpoint's weights, step, log and film; the optimizer keeps its fresh moments."""
        self.model.load_state_dict(start.checkpoint.model.state_dict())
        self.state["step"] = start.step
        self.log = start.log or self.log
        self.log.setdefault("init_from", []).append({"checkpoint": str(start.checkpoint.path), "step": start.step})
        if self.args.film == "on" and self.dist.main:
            if start.frames:
                film.save(self.out / film.FILM_FILE, start.frames)  # this run's frames are appended to these
            else:
                (self.out / film.FILM_FILE).unlink(missing_ok=True)
        self.say(announce(start))

    def record_speed(self) -> None:
        """Whole-run throughput so far: real tokens per training second and MFU (model/training/flops.py)."""
        state = self.state
        seconds = max(state["seconds"], 1e-9)
        self.log["speed"] = {
            "training_seconds": round(state["seconds"], 1),
            "tokens": state["tokens"],
            "tokens_per_second": round(state["tokens"] / seconds),
            "model_flops": state["flops"],
            "mfu": round(state["flops"] / seconds / self.peak, 4) if self.peak else None,
            "evaluation_seconds": round(state.get("evaluation_seconds", 0.0), 1),
        }

    def validate(self) -> tuple[dict, float]:
        """(validation scores, mean BLEU of the two directions)."""
        scores = validate(self.model, self.tokenizer, self.val_examples, self.val_sets, self.args, self.device)
        return scores, (scores["bleu_de_en"] + scores["bleu_en_de"]) / 2

    def evaluate_and_save(self) -> None:
        """Validate, log, keep a snapshot and a film frame, save best/ when better and last/ always."""
        args, state, log, out = self.args, self.state, self.log, self.out
        evaluation_start = time.time()
        self.record_speed()
        scores, mean_bleu = self.validate()
        for key, value in scores.items():
            log["validation"].setdefault(key, []).append(round(value, 4))
        log["validation"]["step"].append(state["step"])
        print(
            f"\nstep {state['step']}: val loss {scores['loss']:.3f}  BLEU de-en {scores['bleu_de_en']:.2f}  "
            f"en-de {scores['bleu_en_de']:.2f}",
            flush=True,
        )
        if args.keep_evaluations:
            save_run_checkpoint(
                out / EVALUATIONS_DIR / str(state["step"]),
                *(self.model, self.tokenizer, log, state, scores, self.command, self.commit),
                f"evaluation at step {state['step']:,}",
            )
        if args.average_last:
            self.snapshots.append({k: v.detach().clone().cpu() for k, v in self.model.state_dict().items()})
            del self.snapshots[: -args.average_last]
        if args.film == "on":
            bleu = {"de-en": scores["bleu_de_en"], "en-de": scores["bleu_en_de"]}
            film.append(out / film.FILM_FILE, film.record_frame(self.model, self.tokenizer, state["step"], bleu))
            self.model.train()
        if mean_bleu > state["best_bleu"]:
            state["best_bleu"] = mean_bleu
            save_run_checkpoint(
                out / "best", self.model, self.tokenizer, log, state, scores, self.command, self.commit, "best"
            )
        save_training_state(out / "last", self.model, self.optimizer, state, self.tokenizer, log)
        (out / LOG_FILE).write_text(json.dumps(log) + "\n", encoding="utf-8")  # the run's log, beside best/ and last/
        state["evaluation_seconds"] = state.get("evaluation_seconds", 0.0) + time.time() - evaluation_start

    def loss(self, src, tgt_in, labels) -> torch.Tensor:
        """The batch's summed loss; if torch.compile fails on this machine, train eagerly from here on."""
        smoothing, autocast = self.args.label_smoothing, self.precision.autocast
        try:
            return summed_loss(self.training_model, src, tgt_in, labels, self.config.pad_id, smoothing, autocast)
        except Exception as error:  # noqa: BLE001  torch.compile failed on this machine: train eagerly
            if self.training_model is self.model or not self.compiled or self.dist.world > 1:
                raise
            print(f"torch.compile failed ({type(error).__name__}: {error}); training without it", flush=True)
            self.training_model, self.compiled = self.model, False
            return summed_loss(self.model, src, tgt_in, labels, self.config.pad_id, smoothing, autocast)

    def step(self, loss_sum: torch.Tensor, tgt_tokens: int) -> float:
        """Backward, clip, the learning rate of the new step (section 5.3), Adam -> that rate."""
        (loss_sum / max(tgt_tokens, 1)).backward()  # token counts come from the CPU copy: no GPU sync
        if self.args.clip_norm:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_norm)
        self.state["step"] += 1
        rate = learning_rate(self.state["step"], self.config.d_model, self.args.warmup, self.args.lr_factor)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.state["batch_in_epoch"] += 1
        return rate

    def stops(self) -> bool:
        """--max-steps or --max-minutes reached; with several processes every rank stops together."""
        args, state = self.args, self.state
        out_of_time = args.max_minutes and state["seconds"] > args.max_minutes * 60
        done = bool((args.max_steps and state["step"] >= args.max_steps) or out_of_time)
        if self.dist.world > 1:
            flag = torch.tensor(float(done), device=self.device)
            torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
            done = bool(flag.item())
        return done

    def finish(self) -> None:
        """The last evaluation if the run did not end on one, checkpoint averaging, where the files are."""
        log, state, out = self.log, self.state, self.out
        if log["validation"]["step"] and log["validation"]["step"][-1] != state["step"]:
            self.evaluate_and_save()
        if len(self.snapshots) > 1:
            self.try_average()
        print(
            f"done: {state['step']} steps, {state['seconds'] / 60:.1f} min, best mean val BLEU {state['best_bleu']:.2f}"
        )
        print(f"best checkpoint: {out / 'best'}\ntraining log: {out / LOG_FILE}")
        if self.args.film == "on":
            print(f"training film: {out / film.FILM_FILE}")

    def try_average(self) -> None:
        """Checkpoint averaging (section 6.1 averages the last checkpoints): the average is saved to OUT/average
        (to score it on full sets later) and replaces best/ if its val BLEU is better."""
        self.model.load_state_dict(average_state_dicts(self.snapshots))
        scores, mean_bleu = self.validate()
        selected = f"average of last {len(self.snapshots)}"
        print(f"{selected}: val BLEU de-en {scores['bleu_de_en']:.2f} en-de {scores['bleu_en_de']:.2f}")
        files = (self.model, self.tokenizer, self.log, self.state, scores, self.command, self.commit, selected)
        save_run_checkpoint(self.out / "average", *files)
        if mean_bleu > self.state["best_bleu"]:
            self.state["best_bleu"] = mean_bleu
            save_run_checkpoint(self.out / "best", *files)


class Clock:
    """Training time and when to evaluate: evaluations are taken out of the training time (--eval-minutes)."""

    def __init__(self, run: Run) -> None:
        self.run, self.start = run, time.time()
        self.next_evaluation = run.state["seconds"] + run.args.eval_minutes * 60
        self.window_tokens, self.window_start = 0, time.time()

    def tick(self) -> None:
        """Add the time since the last tick to the run's training seconds."""
        now = time.time()
        self.run.state["seconds"] += now - self.start
        self.start = now

    def evaluation_due(self) -> bool:
        args, seconds = self.run.args, self.run.state["seconds"]
        return bool(args.eval_minutes and seconds >= self.next_evaluation)

    def evaluate(self) -> None:
        """Evaluate on the main process (outside training time) and restart the clocks."""
        run = self.run
        if run.cuda:
            torch.cuda.synchronize(run.device)  # the steps queued so far belong to training time
        run.state["seconds"] += time.time() - self.start
        if run.dist.main:
            run.evaluate_and_save()
        run.dist.barrier()
        while run.args.eval_minutes and self.next_evaluation <= run.state["seconds"]:
            self.next_evaluation += run.args.eval_minutes * 60
        self.window_tokens, self.window_start, self.start = 0, time.time(), time.time()


def log_step(run: Run, clock: Clock, loss_sum: torch.Tensor, tgt_tokens: int, rate: float, progress) -> None:
    """Every --log-every steps: loss, learning rate and tokens/s into the log and the progress bar."""
    state, log = run.state, run.log
    loss_value = loss_sum.item() / max(tgt_tokens, 1)
    speed = clock.window_tokens / max(time.time() - clock.window_start, 1e-9)
    clock.window_tokens, clock.window_start = 0, time.time()
    for key, value in (
        ("step", state["step"]),
        ("loss", round(loss_value, 4)),
        ("learning_rate", rate),
        ("tokens_per_second", round(speed)),
    ):
        log["train"][key].append(value)
    if progress is not None:
        progress.set_postfix_str(
            f"loss {loss_value:.3f}  {speed / 1000:.1f}k tok/s  lr {rate:.2e}  epoch {state['epoch']}"
        )


def train_epoch(run: Run, clock: Clock, progress) -> bool:
    """The rest of the current epoch (from state["batch_in_epoch"]) -> whether the run is done."""
    args, state, dist = run.args, run.state, run.dist
    batches = token_batches(run.examples, args.max_tokens, random.Random(args.seed + state["epoch"]))
    per_rank = len(batches) // dist.world
    batches = batches[dist.rank :: dist.world][:per_rank]
    clock.start = time.time()  # training time runs from here; evaluations are taken out of it
    for src, tgt_in, labels, src_tokens, tgt_tokens, flops in prefetch(
        run.examples, batches[state["batch_in_epoch"] :], run.config, run.device
    ):
        loss_sum = run.loss(src, tgt_in, labels)
        rate = run.step(loss_sum, tgt_tokens)
        state["tokens"] += (src_tokens + tgt_tokens) * dist.world
        state["flops"] += flops * dist.world
        clock.window_tokens += (src_tokens + tgt_tokens) * dist.world
        if state["step"] % args.log_every == 0 and dist.main:
            log_step(run, clock, loss_sum, tgt_tokens, rate, progress)
        if progress is not None:
            progress.update(1)
        clock.tick()
        done = run.stops()
        if state["step"] % args.eval_every == 0 or done or clock.evaluation_due():
            clock.evaluate()
        if done:
            return True
    state["epoch"] += 1
    state["batch_in_epoch"] = 0
    return False


def progress_bar(run: Run):
    """A tqdm bar on the main process (None without tqdm)."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(
        total=run.args.max_steps or None,
        initial=run.state["step"],
        disable=not run.dist.main,
        mininterval=2.0,
        dynamic_ncols=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    dist = Distributed(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    try:  # with --resume and OUT/last, --init-from gives the model's shape and OUT/last the rest (Run)
        start = load_start(args.init_from, sys.argv[1:] if argv is None else argv) if args.init_from else None
        pairs = read_sources(args.data)
        val_sets = {source_name(spec): read_sources([spec]) for spec in args.val}
    except (DataError, InitFromError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    run = Run(args, argv, dist, pairs, val_sets, start)
    run.model.train()
    clock, progress, done = Clock(run), progress_bar(run), False
    while not done and run.state["epoch"] < args.epochs:
        done = train_epoch(run, clock, progress)
    if progress is not None:
        progress.close()
    if dist.main:
        run.finish()
    if dist.world > 1:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
