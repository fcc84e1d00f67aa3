"""Write an untrained small checkpoint for developing the app before the real model is trained.

A tokenizer is trained on the first few thousand lines of Multi30k train.{de,en} (section 3.4:
one shared German+English vocabulary) and saved beside a randomly initialised small model, so the
app shows real subword tokens and every view has the right shapes (the translations are noise).

    python3 scripts/make_dev_checkpoint.py /tmp/dev-checkpoint
    python3 scripts/make_dev_checkpoint.py /tmp/dev-checkpoint --data ../shared/data/multi30k --lines 5000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model import SubwordTokenizer, Transformer, TransformerConfig, save_checkpoint  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multi30k"


def read_lines(path: Path, limit: int) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        lines = [line.strip() for _, line in zip(range(limit), handle)]
    return [line for line in lines if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="checkpoint directory to write")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding train.de and train.en")
    parser.add_argument("--lines", type=int, default=4000, help="lines per language for the tokenizer")
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    files = [args.data / "train.de", args.data / "train.en"]
    missing = [str(path) for path in files if not path.exists()]
    if missing:
        parser.error(f"missing training text: {', '.join(missing)}")
    texts = [line for path in files for line in read_lines(path, args.lines)]
    tokenizer = SubwordTokenizer.train(texts, vocab_size=args.vocab_size)
    config = TransformerConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=64,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=128,
        dropout=0.1,
        attention_dropout=0.1,
        max_positions=256,
    )
    torch.manual_seed(args.seed)
    model = Transformer(config).eval()
    metrics = {"note": "untrained development checkpoint: random weights, translations are noise"}
    save_checkpoint(args.out_dir, model, tokenizer, metrics)
    print(f"wrote {args.out_dir} ({model.num_parameters():,} parameters, vocabulary {tokenizer.vocab_size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
