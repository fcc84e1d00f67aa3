"""Score a checkpoint on Multi30k val and test_2016_flickr, each direction it translates, greedy and beam 4.

The project's own checkpoint (both directions): the scores go into its metrics.json under "scores" (with the
command and the git commit that scored it), its model card (README.md, model/checkpoints/model_card.py) is
regenerated, and the Markdown table the README shows is printed:

    python scripts/score_checkpoint.py --checkpoint checkpoints/de-en-small --data ../shared/data/multi30k

An OPUS-MT (Marian) checkpoint, run through this project's core (model/checkpoints/marian.py): a local folder,
or with --hub a Hugging Face Hub repo id (downloaded into the Hub cache; offline by default). It translates one
direction, and only that one is scored. Nothing is written into its folder: the scores, the command and the
scores its model card publishes go to --out (JSON), and both tables are printed:

    python scripts/score_checkpoint.py --opus-mt Helsinki-NLP/opus-mt-de-en --hub --splits PATH/newstest2018
    python scripts/score_checkpoint.py --opus-mt ~/opus-mt-en-de --data ../shared/data/multi30k

sacreBLEU, cased, on detokenized output (model.training.evaluate.score). Greedy decoding picks what
`transformers`' `generate` picks for the same weights (tests/project/test_score_checkpoint.py). Beam: 4, the
GNMT length penalty with alpha 0.6 (section 6.1), as the Beam panel; `transformers` and Marian rank beams
differently (docs/opus-mt.md, "Beam search"), so beam scores are this project's beam, not Marian's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.checkpoints.checkpoint import METRICS_FILE, Checkpoint, load_checkpoint  # noqa: E402
from model.checkpoints.files import CheckpointError  # noqa: E402
from model.checkpoints.marian import load_marian_checkpoint  # noqa: E402
from model.training.evaluate import score, translate_batch  # noqa: E402
from model.checkpoints.model_card import write_model_card  # noqa: E402
from model.training.train import git_commit  # noqa: E402

DECODINGS = {"greedy": 1, "beam4": 4}


def read_split(data_dir: Path, split: str, language: str) -> tuple[str, list[str]]:
    """(name, lines) of one side of a split: a split of `data_dir` (val -> DATA/val.de), or a path prefix
    (PREFIX.de), named by its last two parts (tatoeba/holdout)."""
    prefix = Path(split) if "/" in split else data_dir / split
    name = "/".join(Path(split).parts[-2:]) if "/" in split else split
    return name, Path(f"{prefix}.{language}").read_text(encoding="utf-8").splitlines()


def score_checkpoint(checkpoint: Checkpoint, data_dir: Path, splits: list[str], decodings: list[str]) -> dict:
    """{split: {direction: {decoding: {"bleu", "chrf", "seconds"}}}} for every direction the checkpoint's
    tokenizer translates (the own model both, an OPUS-MT model its one)."""
    scores: dict = {}
    for split in splits:
        for direction in checkpoint.tokenizer.directions:
            source_language, target_language = direction.split("-")
            name, sources = read_split(data_dir, split, source_language)
            _, references = read_split(data_dir, split, target_language)
            for decoding in decodings:
                start = time.time()
                hypotheses = translate_batch(
                    checkpoint.model, checkpoint.tokenizer, sources, direction, beam_size=DECODINGS[decoding]
                )
                result = score(hypotheses, references)
                result["seconds"] = round(time.time() - start, 1)
                scores.setdefault(name, {}).setdefault(direction, {})[decoding] = result
                print(
                    f"{name:18s} {direction} {decoding:6s} BLEU {result['bleu']:6.2f}  chrF {result['chrf']:6.2f}"
                    f"  ({len(sources)} sentences, {result['seconds']} s)",
                    flush=True,
                )
    return scores


def markdown_table(scores: dict) -> str:
    lines = [
        "| split | direction | greedy BLEU | beam-4 BLEU | greedy chrF | beam-4 chrF |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for split, directions in scores.items():
        for direction, by_decoding in directions.items():
            greedy, beam = by_decoding.get("greedy", {}), by_decoding.get("beam4", {})
            lines.append(
                f"| {split} | {direction} | {greedy.get('bleu', '–')} | {beam.get('bleu', '–')} | "
                f"{greedy.get('chrf', '–')} | {beam.get('chrf', '–')} |"
            )
    return "\n".join(lines)


def published_table(rows: list[dict]) -> str:
    """The model card's own benchmark rows, as published (not measured here)."""
    lines = ["| testset (published on the model card) | BLEU | chr-F |", "| --- | ---: | ---: |"]
    lines += [f"| {row.get('testset', '')} | {row.get('BLEU', '')} | {row.get('chr-F', '')} |" for row in rows]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--checkpoint", type=Path, help="the project's own checkpoint directory")
    which.add_argument(
        "--opus-mt",
        metavar="DIR_OR_REPO",
        help="an OPUS-MT (Marian) checkpoint: a local folder, or with --hub a Hub repo id "
        "(Helsinki-NLP/opus-mt-de-en); its one direction is scored",
    )
    parser.add_argument("--hub", action="store_true", help="--opus-mt is a Hugging Face Hub repo id (downloads it)")
    parser.add_argument("--revision", help="with --hub: a branch, tag or commit of the repo (default: main)")
    parser.add_argument(
        "--out",
        type=Path,
        help="with --opus-mt: the JSON file of the scores (default: runs/opus-mt-scores/NAME.json)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "multi30k",
        help="folder with SPLIT.de / SPLIT.en files",
    )
    parser.add_argument(
        "--splits",
        nargs="+",
        default=["val", "test_2016_flickr"],
        help="splits of --data, or path prefixes PREFIX (PREFIX.de / PREFIX.en; named by their "
        "last two parts, e.g. tatoeba/holdout)",
    )
    parser.add_argument("--decodings", nargs="+", choices=sorted(DECODINGS), default=["greedy", "beam4"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="auto", help="auto (cuda when there is one), cpu, cuda")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.hub or args.revision or args.out) and not args.opus_mt:
        parser.error("--hub, --revision and --out go with --opus-mt")
    if args.revision and not args.hub:
        parser.error("--revision needs --hub (a local folder has no revisions)")
    torch.set_num_threads(args.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    try:
        checkpoint = (
            load_marian_checkpoint(args.opus_mt, hub=args.hub, device=device, revision=args.revision)
            if args.opus_mt
            else load_checkpoint(args.checkpoint, device=device)
        )
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    scores = score_checkpoint(checkpoint, args.data, args.splits, args.decodings)
    scored_by = {
        "command": "python scripts/score_checkpoint.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": git_commit(),
        "bleu": "sacreBLEU corpus_bleu, cased, 13a, detokenized",
        "beam": "beam 4, GNMT length penalty alpha 0.6 (model/decoding/beam.py)",
    }
    if args.opus_mt:
        name = checkpoint.metrics["name"]
        out = args.out or ROOT / "runs" / "opus-mt-scores" / f"{name.replace('/', '--')}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "model": name,
            "revision": args.revision,
            "scores": scores,
            "scored_by": scored_by,
            "published_scores": checkpoint.metrics["published_scores"],
        }
        out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(markdown_table(scores))
        if result["published_scores"]:
            print("\n" + published_table(result["published_scores"]))
        print(f"\nwrote {out}")
        return 0
    path = args.checkpoint / METRICS_FILE
    metrics = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    metrics["scores"] = scores
    metrics["scored_by"] = scored_by
    path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    write_model_card(args.checkpoint)  # the card's model-index follows the new scores
    print(markdown_table(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
