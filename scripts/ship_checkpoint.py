"""Ship a checkpoint from a training run in one command: the mean of its last kept evaluations (section 6.1 averages
the last checkpoints), validated with the run's own validation settings, with its training film ending on the
shipped weights, its corpus file, metrics that add up every run it continues, and its model card.

    python3 -m model.training.train ... --out runs/next --keep-evaluations      # keeps OUT/evaluations/STEP
    python3 -m scripts.ship_checkpoint runs/next --last 9 --out checkpoints/de-en-small \\
        --continues checkpoints/de-en-small                                     # the checkpoint the run started from

Run it from the folder the training ran in (the run's data paths are relative to it). Steps, into a folder beside
--out that replaces it only once every step is done:
1. average RUN/evaluations' last N (`model.training.average`), named "average of N evaluations (steps ...)";
2. validate the average as training validates (`model.training.validation.validate`, the run's --val,
   --bleu-sentences, --max-tokens, --max-length and --label-smoothing read from its command): metrics' `validation`;
3. the run's film (RUN/film.npz) up to the newest averaged step, its last frame recorded anew from the average;
4. the corpus file (`scripts.corpus_heads`, options through --corpus-args), stamped with the average's weights;
5. metrics.json: the newest evaluation's, plus, with --continues (a run started with --init-from CHECKPOINT), that
   checkpoint's tokens, training and evaluation seconds added and its written `recipe`, `training_data` and
   `hardware` kept unless given anew; the full-set `scores` are dropped (the weights changed: re-score with
   scripts/score_checkpoint.py, which writes them and the card again);
6. the model card (README.md) from those metrics.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path

import torch

from model.checkpoints.checkpoint import CheckpointError, load_local_checkpoint
from model.checkpoints.model_card import write_model_card
from model.training import film
from model.training.average import average_checkpoints
from model.training.data import DataError, make_examples, read_sources
from model.training.options import build_parser
from model.training.run_files import EVALUATIONS_DIR
from model.training.train import source_name
from model.training.validation import validate
from scripts import corpus_heads

METRICS_FILE = "metrics.json"
CARRIED = ("recipe", "training_data", "hardware")  # written by hand once, kept across the runs that continue it
SUMMED = ("tokens", "training_seconds", "evaluation_seconds")  # counted per run, added across runs


def kept_evaluations(run: Path) -> list[Path]:
    """RUN/evaluations/STEP folders, oldest first."""
    folder = run / EVALUATIONS_DIR
    steps = sorted(int(path.name) for path in folder.iterdir() if path.name.isdigit()) if folder.is_dir() else []
    return [folder / str(step) for step in steps]


def run_arguments(metrics: dict) -> argparse.Namespace:
    """The training command's arguments (as recorded in an evaluation's metrics.json)."""
    command = shlex.split(metrics["command"])
    return build_parser().parse_args(command[3:])  # after "python -m model.training.train"


def validate_checkpoint(directory: Path, args: argparse.Namespace) -> dict:
    """Training's validation of the checkpoint in `directory`, with the run's settings."""
    checkpoint = load_local_checkpoint(directory)
    val_sets = {source_name(spec): read_sources([spec]) for spec in args.val}
    pairs = [pair for pairs in val_sets.values() for pair in pairs]
    examples = make_examples(pairs, checkpoint.tokenizer, args.max_length)
    scores = validate(checkpoint.model, checkpoint.tokenizer, examples, val_sets, args, torch.device("cpu"))
    return {key: round(value, 4) for key, value in scores.items()}


def film_ending_on(directory: Path, run_film: Path, step: int, scores: dict) -> int:
    """directory/film.npz: the run's frames before `step` and a frame of the weights in `directory` at `step`."""
    checkpoint = load_local_checkpoint(directory)
    frames = [frame for frame in film.load_film(run_film) if frame["step"] < step] if run_film.is_file() else []
    bleu = {"de-en": scores["bleu_de_en"], "en-de": scores["bleu_en_de"]}
    frames.append(film.record_frame(checkpoint.model, checkpoint.tokenizer, step, bleu))
    film.save(directory / film.FILM_FILE, frames)
    return len(frames)


def merged_metrics(metrics: dict, previous: dict | None, written: dict) -> dict:
    """The shipped metrics: this run's, plus the runs before it (`previous`), plus what was written anew."""
    merged = {key: value for key, value in metrics.items() if key not in ("scores", "scored_by")}
    if previous is not None:
        for key in SUMMED:
            merged[key] = round(previous.get(key, 0) + metrics.get(key, 0), 1 if key.endswith("seconds") else None)
        merged.update({key: previous[key] for key in CARRIED if key in previous})
    if merged.get("tokens") and merged.get("training_seconds"):
        merged["tokens_per_second"] = round(merged["tokens"] / merged["training_seconds"])
    merged.update({key: value for key, value in written.items() if value is not None})
    return merged


def ship(args: argparse.Namespace) -> Path:
    """Every step of the module docstring; returns the shipped checkpoint's folder."""
    run, out = Path(args.run), Path(args.out)
    evaluations = kept_evaluations(run)[-args.last :]
    if len(evaluations) < 2:
        raise CheckpointError(f"{run / EVALUATIONS_DIR} holds {len(evaluations)} kept evaluation(s); need 2 or more")
    previous = json.loads((Path(args.continues) / METRICS_FILE).read_text()) if args.continues else None
    staging = out.with_name(f".{out.name}.shipping")
    shutil.rmtree(staging, ignore_errors=True)
    average_checkpoints(evaluations, staging)
    metrics = json.loads((staging / METRICS_FILE).read_text(encoding="utf-8"))
    steps = [entry["step"] for entry in metrics["averaged"]]
    print(f"1. averaged the evaluations at steps {', '.join(f'{s:,}' for s in steps)}")
    scores = validate_checkpoint(staging, run_arguments(metrics))
    print(
        f"2. validated: loss {scores['loss']:.3f}, BLEU de-en {scores['bleu_de_en']:.2f} en-de {scores['bleu_en_de']:.2f}"
    )
    frames = film_ending_on(staging, run / film.FILM_FILE, steps[-1], scores)
    print(f"3. film: {frames} frames, the last recorded from the average")
    if corpus_heads.main(["--checkpoint", str(staging), *shlex.split(args.corpus_args)]) != 0:
        raise CheckpointError("the corpus file could not be written (see above)")
    print("4. corpus file written")
    selected = f"average of {len(steps)} evaluations (steps {', '.join(f'{s:,}' for s in steps)})"
    written = {"selected": selected, "validation": scores, "recipe": args.recipe, "training_data": args.training_data}
    written["hardware"] = args.hardware
    metrics = merged_metrics({**metrics, "averaged": [{"step": s} for s in steps]}, previous, written)
    (staging / METRICS_FILE).write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"5. metrics: {metrics.get('tokens', 0):,} tokens, {metrics.get('training_seconds', 0):,.0f} s of training")
    write_model_card(staging)
    print("6. model card written")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="the training run's folder (trained with --keep-evaluations)")
    parser.add_argument("--last", type=int, required=True, help="average the last N kept evaluations")
    parser.add_argument("--out", required=True, help="the shipped checkpoint's folder (replaced)")
    parser.add_argument("--continues", help="the checkpoint this run was started from (--init-from): its counts add up")
    parser.add_argument("--corpus-args", default="", help="options of scripts.corpus_heads, as one string")
    parser.add_argument("--recipe", help="how the weights were made, for metrics.json and the card")
    parser.add_argument("--training-data", help="what the run trained on, for metrics.json and the card")
    parser.add_argument("--hardware", help="what the runs trained on, for metrics.json and the card")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        out = ship(args)
    except (CheckpointError, DataError, OSError, ValueError) as error:
        print(f"cannot ship: {error}", file=sys.stderr)
        return 2
    print(f"shipped {out}; score it on the full sets: python3 scripts/score_checkpoint.py --checkpoint {out} ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
