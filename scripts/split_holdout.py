"""Hold out a random slice of a Tatoeba file for model selection, sharing no sentence with training.

    python3 -m scripts.split_holdout ../shared/data/tatoeba/eng-deu.large.tsv --out data/tatoeba --size 3000

writes `OUT/train.tsv` and `OUT/holdout.tsv` (both `English<TAB>German`), and the holdout again as
line-aligned `OUT/holdout.de` / `OUT/holdout.en` for scripts/score_checkpoint.py. With `--unseen-by FILE`
it also writes `OUT/holdout-unseen.{de,en}`: the held-out pairs that share no sentence with FILE (an
older model's training data), for a fair comparison with that model. A pair goes to the holdout
at random (seeded); every training pair whose English or German sentence also occurs in the holdout
is dropped, so no sentence is shared (Tatoeba has many translations of one sentence). The app's own
examples are never in the holdout: a model is not selected on the sentences it is then shown with.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

Pair = tuple[str, str]  # (English, German), the file's column order


def read_pairs(path: Path) -> list[Pair]:
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        columns = line.split("\t")
        if len(columns) >= 2 and columns[0].strip() and columns[1].strip():
            pairs.append((columns[0].strip(), columns[1].strip()))
    return pairs


def split_holdout(
    pairs: list[Pair], size: int, seed: int = 0, exclude: set[str] = frozenset()
) -> tuple[list[Pair], list[Pair]]:
    """-> (training pairs, held-out pairs): `size` held-out pairs, no sentence on either side shared.

    Pairs with a sentence in `exclude` are never held out (they stay in training).
    """
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    held_out: list[Pair] = []
    held_sentences: set[str] = set()
    for index in order:
        if len(held_out) == size:
            break
        english, german = pairs[index]
        if english in exclude or german in exclude:
            continue
        held_out.append(pairs[index])
        held_sentences.update(pairs[index])
    training = [pair for pair in pairs if pair[0] not in held_sentences and pair[1] not in held_sentences]
    return training, held_out


def write_pairs(path: Path, pairs: list[Pair]) -> None:
    path.write_text("".join(f"{english}\t{german}\n" for english, german in pairs), encoding="utf-8")


def write_aligned(prefix: Path, pairs: list[Pair]) -> None:
    """PREFIX.en and PREFIX.de, line-aligned (the Multi30k layout)."""
    for suffix, column in (("en", 0), ("de", 1)):
        Path(f"{prefix}.{suffix}").write_text("".join(pair[column] + "\n" for pair in pairs), encoding="utf-8")


def unseen(pairs: list[Pair], other: list[Pair]) -> list[Pair]:
    """The pairs that share no sentence, on either side, with `other`."""
    sentences = {sentence for pair in other for sentence in pair}
    return [pair for pair in pairs if pair[0] not in sentences and pair[1] not in sentences]


def app_example_sentences() -> set[str]:
    """The examples a visitor sees on the page (ui/text.py, read without importing Gradio)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("page_text", Path(__file__).parents[1] / "ui" / "text.py")
    text = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(text)
    return {sentence for sentence, _direction in text.EXAMPLES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.split_holdout", description=__doc__.splitlines()[0])
    parser.add_argument("tsv", type=Path, help="English<TAB>German file")
    parser.add_argument("--out", type=Path, required=True, help="folder for train.tsv and holdout.tsv")
    parser.add_argument("--size", type=int, default=3000, help="held-out pairs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--unseen-by", type=Path, help="also write the held-out pairs unseen in this TSV")
    args = parser.parse_args(argv)
    pairs = read_pairs(args.tsv)
    training, held_out = split_holdout(pairs, args.size, args.seed, app_example_sentences())
    args.out.mkdir(parents=True, exist_ok=True)
    write_pairs(args.out / "train.tsv", training)
    write_pairs(args.out / "holdout.tsv", held_out)
    write_aligned(args.out / "holdout", held_out)
    if args.unseen_by:
        fresh = unseen(held_out, read_pairs(args.unseen_by))
        write_aligned(args.out / "holdout-unseen", fresh)
        print(f"{len(fresh)} held-out pairs share no sentence with {args.unseen_by}")
    print(
        f"{len(pairs)} pairs -> {len(training)} training + {len(held_out)} held out "
        f"({len(pairs) - len(training) - len(held_out)} dropped for sharing a sentence with the holdout)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
