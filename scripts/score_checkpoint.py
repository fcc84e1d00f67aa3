"""Score a checkpoint on Multi30k val and test_2016_flickr, both directions, greedy and beam 4.

Writes the scores into the checkpoint's metrics.json under "scores" (with the command and the git
commit that scored it), regenerates its model card (README.md, model/checkpoints/model_card.py) and prints the
Markdown table the README shows:

    python scripts/score_checkpoint.py --checkpoint checkpoints/de-en-small --data ../shared/data/multi30k

sacreBLEU, cased, on detokenized output (model.training.evaluate.score). Beam: 4, length penalty 0.6 (6.1).
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

from model.checkpoints.checkpoint import METRICS_FILE, load_checkpoint  # noqa: E402
from model.training.evaluate import score, translate_batch  # noqa: E402
from model.checkpoints.model_card import write_model_card  # noqa: E402
from model.training.train import git_commit  # noqa: E402

DECODINGS = {"greedy": 1, "beam4": 4}


def score_checkpoint(
    checkpoint_dir: Path, data_dir: Path, splits: list[str], decodings: list[str], device: str = "cpu"
) -> dict:
    checkpoint = load_checkpoint(checkpoint_dir, device=device)
    scores: dict = {}
    for split in splits:
        prefix = Path(split) if "/" in split else data_dir / split  # a path prefix, or a split of --data
        split = "/".join(Path(split).parts[-2:]) if "/" in split else split
        german = (Path(f"{prefix}.de")).read_text(encoding="utf-8").splitlines()
        english = (Path(f"{prefix}.en")).read_text(encoding="utf-8").splitlines()
        for direction, sources, references in (("de-en", german, english), ("en-de", english, german)):
            for decoding in decodings:
                start = time.time()
                hypotheses = translate_batch(
                    checkpoint.model, checkpoint.tokenizer, sources, direction, beam_size=DECODINGS[decoding]
                )
                result = score(hypotheses, references)
                result["seconds"] = round(time.time() - start, 1)
                scores.setdefault(split, {}).setdefault(direction, {})[decoding] = result
                print(
                    f"{split:18s} {direction} {decoding:6s} BLEU {result['bleu']:6.2f}  chrF {result['chrf']:6.2f}"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
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
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    scores = score_checkpoint(args.checkpoint, args.data, args.splits, args.decodings, device)
    path = args.checkpoint / METRICS_FILE
    metrics = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    metrics["scores"] = scores
    metrics["scored_by"] = {
        "command": "python scripts/score_checkpoint.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": git_commit(),
        "bleu": "sacreBLEU corpus_bleu, cased, 13a, detokenized",
    }
    path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    write_model_card(args.checkpoint)  # the card's model-index follows the new scores
    print(markdown_table(scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
