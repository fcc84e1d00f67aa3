"""Compute the corpus figures of a checkpoint once and write them beside it:

    python3 -m scripts.corpus_heads --checkpoint checkpoints/de-en-small [--sentences 200]

Head roles (Voita et al. 2019), head importance and pruning curves (Michel et al. 2019) and every head's
query-key map (AttentionViz, Yeh et al. 2023) over Multi30k val in both directions, into
CHECKPOINT/corpus_heads.npz (< 5 MB), stamped with a hash of the weights: the app shows the file only
while it matches the loaded weights, and says how to make it otherwise. The roles include
cross-attention's aligned and monotone heads (model/analysis/corpus/roles.py); the command ends by
printing how many heads of each kind took each role.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from model.checkpoints.checkpoint import CheckpointError, load_checkpoint
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.roles import role_counts
from model.analysis.corpus.store import MAX_BYTES, CorpusHeads, corpus_path, save_corpus
from model.training.data import DataError, read_aligned

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "multi30k" / "val"  # ../shared/data, as the data README asks


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="checkpoint directory")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="PREFIX of line-aligned PREFIX.de / PREFIX.en")
    parser.add_argument(
        "--sentences",
        type=int,
        default=None,
        help="pairs for head roles (default: all; each pair is read in both directions)",
    )
    parser.add_argument("--importance-sentences", type=int, default=200, help="pairs for head importance")
    parser.add_argument("--prune-sentences", type=int, default=50, help="pairs decoded at each pruning point")
    parser.add_argument("--map-sentences", type=int, default=100, help="pairs whose queries and keys are mapped")
    parser.add_argument("--prune-points", type=int, default=9, help="pruning levels from none to all heads")
    parser.add_argument("--random-orders", type=int, default=1, help="random pruning orders (the baseline)")
    parser.add_argument("--importance-batch", type=int, default=1, help="sentences per gradient (1 = per sentence)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="output file (default: CHECKPOINT/corpus_heads.npz)")
    return parser.parse_args(argv)


def role_count_lines(data: CorpusHeads) -> list[str]:
    """One line per kind of attention: how many of its heads took each role, most frequent first (docs/views.md
    records the shipped checkpoint's, a test checks them against its file)."""
    lines = []
    for kind in KINDS:
        counts = ", ".join(f"{count} {role}" for role, count in role_counts(data.roles[kind]).items())
        lines.append(f"roles of {kind} ({data.roles[kind].size} heads): {counts}")
    return lines


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        checkpoint = load_checkpoint(args.checkpoint)
        pairs = read_aligned(args.data)
        settings = CorpusSettings(
            args.sentences,
            args.importance_sentences,
            args.prune_sentences,
            args.map_sentences,
            args.importance_batch,
            args.prune_points,
            args.random_orders,
            args.batch_size,
            args.seed,
        )
    except (CheckpointError, DataError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    start = time.perf_counter()
    data = compute_corpus_heads(checkpoint.model, checkpoint.tokenizer, pairs, settings, source=str(args.data))
    path = save_corpus(args.out or corpus_path(args.checkpoint), data)
    size = path.stat().st_size
    print(
        f"wrote {path} ({size / 1e6:.2f} MB, {data.settings['examples']} examples, {time.perf_counter() - start:.0f} s)"
    )
    print("\n".join(role_count_lines(data)))
    if size > MAX_BYTES:
        print(f"warning: {path} is over {MAX_BYTES / 1e6:.0f} MB; use fewer --map-sentences", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
