"""The training command line (`python -m model.training.train`, section 5): its options, grouped as data,
model (the TransformerConfig fields, with the config's own defaults), optimisation and run.
"""

from __future__ import annotations

import argparse

from model.core.config import TransformerConfig
from model.training import film
from model.training.precision import PRECISIONS
from model.training.run_files import EVALUATIONS_DIR

DESCRIPTION = "Training, section 5 of the paper: Adam, warm-up + inverse-square-root learning rate, label smoothing."

DEFAULTS_CONFIG = TransformerConfig()  # the command line's model defaults are the config's
MODEL_FLAGS = {
    "--d-model": "d_model",
    "--heads": "n_heads",
    "--encoder-layers": "n_encoder_layers",
    "--decoder-layers": "n_decoder_layers",
    "--d-ff": "d_ff",
    "--dropout": "dropout",
    "--attention-dropout": "attention_dropout",
    "--max-positions": "max_positions",
}  # flag -> field


def build_parser() -> argparse.ArgumentParser:
    """The training command line: its data, model, optimisation and run option groups, in that order."""
    parser = argparse.ArgumentParser(prog="python -m model.training.train", description=DESCRIPTION)
    add_data_options(parser.add_argument_group("data"))
    add_model_options(parser.add_argument_group("model (TransformerConfig; defaults are its own)"))
    add_optimisation_options(parser.add_argument_group("optimisation"))
    add_run_options(parser.add_argument_group("run"))
    return parser


def add_data_options(data: argparse._ArgumentGroup) -> None:
    """The training and validation sources, the tokenizer and the longest pair kept."""
    data.add_argument(
        "--data",
        nargs="+",
        required=True,
        help="training sources: PREFIX (PREFIX.de + PREFIX.en), FILE.tsv (English<TAB>German) or hf:DATASET[:CONFIG]",
    )
    data.add_argument(
        "--val",
        nargs="+",
        default=[],
        help="validation sources (same formats), used for model selection: BLEU is the mean over them",
    )
    data.add_argument("--tokenizer", help="reuse this tokenizer.json instead of training one")
    data.add_argument("--vocab-size", type=int, default=DEFAULTS_CONFIG.vocab_size)
    data.add_argument(
        "--max-length", type=int, default=100, help="drop pairs with a side longer than this many subwords"
    )


def add_model_options(model: argparse._ArgumentGroup) -> None:
    """One option per TransformerConfig field of MODEL_FLAGS, defaulting to the config's own value."""
    for flag, field in MODEL_FLAGS.items():
        model.add_argument(
            flag, dest=field, type=type(getattr(DEFAULTS_CONFIG, field)), default=getattr(DEFAULTS_CONFIG, field)
        )


def add_optimisation_options(optim: argparse._ArgumentGroup) -> None:
    """Batch size, learning-rate schedule, label smoothing, clipping, stopping and weight averaging."""
    optim.add_argument("--max-tokens", type=int, default=8000, help="padded source+target tokens per batch (per GPU)")
    optim.add_argument("--warmup", type=int, default=4000)
    optim.add_argument("--lr-factor", type=float, default=1.0, help="multiplies the paper's learning-rate formula")
    optim.add_argument("--label-smoothing", type=float, default=0.1)
    optim.add_argument("--clip-norm", type=float, default=0.0, help="gradient clipping (0 = off, as in the paper)")
    optim.add_argument("--epochs", type=int, default=1000)
    optim.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0 = no limit)")
    optim.add_argument(
        "--max-minutes",
        type=float,
        default=0.0,
        help="stop after this much training time, evaluations not counted (0 = no limit)",
    )
    optim.add_argument(
        "--average-last",
        type=int,
        default=0,
        help="at the end, average the last N evaluated weights into OUT/average; best/ too if val BLEU is better",
    )
    optim.add_argument(
        "--keep-evaluations",
        action="store_true",
        help=f"keep every evaluated weights as a checkpoint in OUT/{EVALUATIONS_DIR}/STEP "
        "(for scripts/ship_checkpoint.py to average any of them later)",
    )


def add_run_options(run: argparse._ArgumentGroup) -> None:
    """The run folder, resuming, seed, evaluation and logging cadence, device, precision and the film."""
    run.add_argument("--out", required=True, help="run directory")
    run.add_argument("--resume", action="store_true", help="continue from OUT/last")
    run.add_argument(
        "--init-from",
        metavar="CHECKPOINT_DIR",
        help="start from this checkpoint's weights, tokenizer, config, step and film (Adam starts "
        "fresh); --resume takes over once OUT/last exists",
    )
    run.add_argument("--seed", type=int, default=1234)
    run.add_argument("--eval-every", type=int, default=1000, help="steps between validations")
    run.add_argument(
        "--eval-minutes",
        type=float,
        default=0.0,
        help="also validate after every this many minutes of training (0 = by steps only)",
    )
    run.add_argument("--bleu-sentences", type=int, default=500, help="validation sentences per direction for BLEU")
    run.add_argument("--log-every", type=int, default=50)
    run.add_argument("--device", default="auto", help="auto, cpu, cuda")
    run.add_argument(
        "--compile", choices=("auto", "on", "off"), default="auto", help="torch.compile (auto: on for CUDA)"
    )
    run.add_argument(
        "--threads", type=int, default=0, help="CPU threads (0 = torch default; 1 is fastest on a small, shared CPU)"
    )
    run.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="bf16 autocast; auto: bf16 on CUDA with bf16 support and on CPUs with AMX / "
        "AVX-512-BF16, float32 elsewhere (the log and metrics.json say which and why)",
    )
    run.add_argument(
        "--film",
        choices=("on", "off"),
        default="on",
        help=f"record the training film ({film.FILM_FILE} in OUT) at every evaluation",
    )
