"""Command line: translate a sentence with a checkpoint, print the text or the whole trace.

python -m model.decoding.cli --checkpoint checkpoints/<name> --direction de-en "Ein Mann fährt Fahrrad."
python -m model.decoding.cli --checkpoint checkpoints/<name> --direction en-de --json "A dog runs."
"""

from __future__ import annotations

import argparse
import sys

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
    parser.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    args = parser.parse_args(argv)
    try:
        checkpoint = load_checkpoint(args.checkpoint, hub=args.hub)
        trace = translate(checkpoint.model, checkpoint.tokenizer, args.text, args.direction)
    except (CheckpointError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(trace.to_json() if args.json else trace.translation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
