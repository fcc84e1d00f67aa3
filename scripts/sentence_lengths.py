"""How long are the training sentences, in a checkpoint's subwords? The source of LONG_SOURCE_SUBWORDS
(model/text/language.py), the guard rail that warns about inputs much longer than anything trained on.

    python3 -m scripts.sentence_lengths --tokenizer checkpoints/de-en-small/tokenizer.json \
        --data ../shared/data/multi30k/train data/tatoeba/train.tsv

Counts every distinct sentence of both languages once and prints the median, the 99th and 99.9th
percentiles and the maximum.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from model.text.tokenizer import SubwordTokenizer
from model.training.data import read_sources


def length_percentiles(lengths: list[int]) -> dict[str, int]:
    """Nearest-rank percentiles: the length that this share of sentences does not exceed."""
    ordered = np.sort(np.asarray(lengths))
    rank = lambda share: int(ordered[min(len(ordered) - 1, int(np.ceil(share * len(ordered))) - 1)])  # noqa: E731
    return {
        "sentences": len(ordered),
        "median": rank(0.5),
        "p99": rank(0.99),
        "p99.9": rank(0.999),
        "max": int(ordered[-1]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.sentence_lengths", description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True, help="a checkpoint's tokenizer.json")
    parser.add_argument(
        "--data", nargs="+", required=True, help="training sources (as model.training.train reads them)"
    )
    args = parser.parse_args(argv)
    tokenizer = SubwordTokenizer.load(args.tokenizer)
    sentences = {text for pair in read_sources(args.data) for text in pair}
    print(length_percentiles([len(tokenizer.encode(text)) for text in sentences]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
