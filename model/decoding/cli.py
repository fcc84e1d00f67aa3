"""Command line: translate a sentence with a checkpoint, print the text or the whole trace.

python -m model.decoding.cli --checkpoint checkpoints/<name> --direction de-en "Ein Mann fährt Fahrrad."
python -m model.decoding.cli --checkpoint checkpoints/<name> --direction en-de --json "A dog runs."
python -m model.decoding.cli --model opus-mt --direction de-en "Ein Mann fährt Fahrrad."   # OPUS-MT (catalogue.py)
"""

from __future__ import annotations

import argparse
import sys

from model.checkpoints.catalogue import MODELS, OPUS_MT_ENV, load_opus_mt
from model.checkpoints.checkpoint import CheckpointError, load_checkpoint
from model.decoding.greedy import translate
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.text.tokenizer import DIRECTIONS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.decoding.cli", description=__doc__.splitlines()[0])
    parser.add_argument("text", help="the sentence to translate")
    parser.add_argument(
        "--checkpoint",
        default=str(DEFAULT_CHECKPOINT),
        help="checkpoint directory (default: the shipped one), or a Hub repo id with --hub",
    )
    parser.add_argument("--hub", action="store_true", help="treat --checkpoint as a Hugging Face Hub repo id")
    parser.add_argument("--direction", choices=DIRECTIONS, default="de-en")
    parser.add_argument(
        "--model",
        choices=list(MODELS),
        default="own",
        help=f"own: the checkpoint above; opus-mt: Helsinki-NLP's OPUS-MT of the direction, from ${OPUS_MT_ENV} "
        "(a folder holding opus-mt-de-en/ and opus-mt-en-de/) or else downloaded from the Hugging Face Hub",
    )
    parser.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    args = parser.parse_args(argv)
    try:
        if args.model == "opus-mt":
            checkpoint = load_opus_mt(args.direction)
        else:
            checkpoint = load_checkpoint(args.checkpoint, hub=args.hub)
        trace = translate(checkpoint.model, checkpoint.tokenizer, args.text, args.direction)
        trace.model = args.model
    except (CheckpointError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(trace.to_json() if args.json else trace.translation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
