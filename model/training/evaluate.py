"""Translation quality on a test set: corpus BLEU, as reported in Table 2 of the paper (section 6.1).

BLEU is computed with sacreBLEU (cased, default 13a tokenizer, on detokenized text), which makes
the number comparable across papers; chrF is reported beside it. Decoding is greedy by default
or beam search with `--beam 4 --length-penalty 0.6` (section 6.1).

    python -m model.training.evaluate --checkpoint checkpoints/<name> --direction de-en \\
        --src data/test_2016_flickr.de --ref data/test_2016_flickr.en [--beam 4] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import sacrebleu
import torch

from model.decoding.beam import beam_search
from model.checkpoints.checkpoint import CheckpointError, load_checkpoint
from model.decoding.greedy import default_max_new_tokens, greedy_decode, pad_batch, prepare_source
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.text.tokenizer import DIRECTIONS, SubwordTokenizer
from model.core.transformer import Transformer


def _strip(ids: list[int], eos_id: int) -> list[int]:
    """Generated ids up to (not including) the first [EOS]."""
    return ids[: ids.index(eos_id)] if eos_id in ids else ids


def _at_own_limit(ids: list[int], budget: int, config) -> list[int]:
    """A batch row's first `budget` ids; with force_eos_at_limit, [EOS] as the last when none came before."""
    ids = ids[:budget]
    if config.force_eos_at_limit and config.eos_id not in ids and len(ids) == budget:
        ids[-1] = config.eos_id
    return ids


def translate_batch(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    texts: list[str],
    direction: str,
    beam_size: int = 1,
    batch_size: int = 64,
    length_penalty: float = 0.6,
) -> list[str]:
    """Translate many sentences, batched by source length; the output keeps the input order.

    Args:
        model: the Transformer; put in eval mode for the call and restored afterwards.
        tokenizer: the checkpoint's tokenizer.
        texts: source sentences.
        direction: "de-en" or "en-de".
        beam_size: 1 = greedy decoding (`greedy_decode`), more = `beam_search`.
        batch_size: sentences per forward pass (beam search runs beam_size rows per sentence).
        length_penalty: alpha of the GNMT length penalty, used by beam search only.

    Returns:
        One detokenized translation per text. Each sentence gets the step budget
        `default_max_new_tokens` of its own source, so results do not depend on batching.
    """
    if beam_size < 1 or batch_size < 1:
        raise ValueError(f"beam_size and batch_size must be at least 1, got {beam_size} and {batch_size}")
    config = model.config
    device = model.embedding.weight.device
    sources = [prepare_source(tokenizer, text, direction)[0] for text in texts]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))  # similar lengths pad little
    outputs: list[list[int]] = [[] for _ in sources]
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                indices = order[start : start + batch_size]
                src = pad_batch([sources[i] for i in indices], config.pad_id).to(device)  # (b, S)
                if beam_size == 1:
                    generated = greedy_decode(model, src, default_max_new_tokens(src.size(1))).tolist()  # (b, T)
                    # the batch budget follows its longest source; cut each to its own budget (the steps
                    # before a sentence's limit do not depend on the budget), where a config that forces
                    # [EOS] at the limit ends it as decoding that sentence alone does
                    generated = [
                        _at_own_limit(row, default_max_new_tokens(len(sources[i])), config)
                        for row, i in zip(generated, indices)
                    ]
                else:
                    results = beam_search(model, src, beam_size=beam_size, length_penalty=length_penalty)
                    generated = [result.best.ids for result in results]
                for index, ids in zip(indices, generated):
                    outputs[index] = _strip(ids, config.eos_id)
    finally:
        model.train(was_training)
    return [tokenizer.decode(ids) for ids in outputs]


def score(hypotheses: list[str], references: list[str]) -> dict:
    """Corpus BLEU and chrF (sacreBLEU defaults: cased, 13a tokenizer), rounded to 2 decimals."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("nothing to score: no sentences")
    bleu = sacrebleu.corpus_bleu(hypotheses, [references]).score
    chrf = sacrebleu.corpus_chrf(hypotheses, [references]).score
    return {"bleu": round(bleu, 2), "chrf": round(chrf, 2)}


def _read_lines(path: str) -> list[str]:
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"file {path} does not exist")
    try:
        return file.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.training.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default=str(DEFAULT_CHECKPOINT),
        help="checkpoint directory (default: the shipped one), or a Hub repo id with --hub",
    )
    parser.add_argument("--hub", action="store_true", help="treat --checkpoint as a Hugging Face Hub repo id")
    parser.add_argument("--src", required=True, help="source sentences, one per line")
    parser.add_argument("--ref", required=True, help="reference translations, one per line")
    parser.add_argument("--direction", choices=DIRECTIONS, default="de-en")
    parser.add_argument("--beam", type=int, default=1, help="beam size; 1 = greedy (paper: 4)")
    parser.add_argument("--length-penalty", type=float, default=0.6, help="GNMT alpha for beam search (paper: 0.6)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per forward pass")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N sentences")
    parser.add_argument("--json", action="store_true", help="print scores and settings as JSON")
    args = parser.parse_args(argv)
    try:
        if args.beam < 1 or args.batch_size < 1:
            raise ValueError("--beam and --batch-size must be at least 1")
        if args.limit is not None and args.limit < 1:
            raise ValueError("--limit must be at least 1")
        sources, references = _read_lines(args.src), _read_lines(args.ref)
        if len(sources) != len(references):
            raise ValueError(f"{args.src} has {len(sources)} lines but {args.ref} has {len(references)}")
        if args.limit is not None:
            sources, references = sources[: args.limit], references[: args.limit]
        if not sources:
            raise ValueError(f"{args.src} is empty")
        checkpoint = load_checkpoint(args.checkpoint, hub=args.hub)
        started = time.perf_counter()
        hypotheses = translate_batch(
            checkpoint.model,
            checkpoint.tokenizer,
            sources,
            args.direction,
            beam_size=args.beam,
            batch_size=args.batch_size,
            length_penalty=args.length_penalty,
        )
        seconds = time.perf_counter() - started
        scores = score(hypotheses, references)
    except (CheckpointError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    decoding = "greedy" if args.beam == 1 else f"beam {args.beam}, alpha {args.length_penalty:g}"
    if args.json:
        print(
            json.dumps(
                {
                    **scores,
                    "decoding": "greedy" if args.beam == 1 else "beam",
                    "beam_size": args.beam,
                    "length_penalty": args.length_penalty if args.beam > 1 else None,
                    "direction": args.direction,
                    "sentences": len(sources),
                    "seconds": round(seconds, 2),
                    "checkpoint": str(args.checkpoint),
                },
                indent=2,
            )
        )
    else:
        print(
            f"BLEU {scores['bleu']:.2f}  chrF {scores['chrf']:.2f}  "
            f"({decoding}, {args.direction}, {len(sources)} sentences, {seconds:.1f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
