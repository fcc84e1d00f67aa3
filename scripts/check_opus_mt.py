"""Check OPUS-MT as the app will run it, for whoever can reach the Hugging Face Hub (run it before a deploy):

    python3 -m scripts.check_opus_mt [--data ../shared/data/multi30k] [--split test_2016_flickr]

Downloads Helsinki-NLP/opus-mt-de-en and opus-mt-en-de (model/checkpoints/catalogue.py: the revisions the app
loads) into the Hub cache and, for each direction, runs a few sentences through this project's core and, where
`transformers` is installed, through `MarianMTModel` on the same files: the largest difference of the logits and of
every attention weight (encoder self, decoder self, cross; the teacher-forced pass over the core's greedy output)
and whether the greedy tokens agree (`generate` with one beam and the app's length budget). Then it scores the
Multi30k split in --data (SPLIT.de / SPLIT.en) with sacreBLEU (greedy, this core; model/training/evaluate.py) and
prints the model card's own figure for that test set beside it, read from the downloaded card (or that the card
has none). One table. Without the Hub it says so in one line and exits with 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from model.checkpoints.catalogue import OPUS_MT_REPOS, load_opus_mt  # noqa: E402
from model.checkpoints.marian import MarianDownloadError, download_marian  # noqa: E402
from model.core.masks import decoder_mask, padding_mask  # noqa: E402
from model.decoding.greedy import default_max_new_tokens, translate  # noqa: E402
from model.training.evaluate import score, translate_batch  # noqa: E402

SENTENCES = {
    "de-en": ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee.", "Die Kinder lesen ein Buch im Park."],
    "en-de": ["A man rides a bicycle.", "Two dogs are playing in the snow.", "The children read a book in the park."],
}
NO_HUB = "The Hugging Face Hub cannot be reached from here, so OPUS-MT was not checked (run this where it can be)."
TOLERANCE = 1e-4  # float32, different kernels: what counts as equal in the table


def peer_of(folder: Path):
    """MarianMTModel and MarianTokenizer on the same files, or None without `transformers`."""
    try:
        import transformers
    except ImportError:
        return None
    model = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager").eval()
    return model, transformers.MarianTokenizer.from_pretrained(folder)


def generate_greedy(model, source_ids: list[int]) -> torch.Tensor:
    """(1, 1 + T): the start token <pad>, then MarianMTModel's greedy `generate` output, with the model's own rules
    (<pad> never generated, </s> forced at the limit) and the app's length budget."""
    with torch.no_grad():
        return model.generate(
            torch.tensor([source_ids]),
            num_beams=1,
            do_sample=False,
            max_new_tokens=default_max_new_tokens(len(source_ids)),
        )


def compare(checkpoint, peer, direction: str) -> dict:
    """Largest logit and attention differences and greedy agreement over SENTENCES[direction]."""
    model, tokenizer = peer
    core = checkpoint.model
    logits, attention, agree = 0.0, 0.0, 0
    for text in SENTENCES[direction]:
        trace = translate(core, checkpoint.tokenizer, text, direction)
        source_ids = list(trace.source_ids)
        generated = generate_greedy(model, source_ids)
        with torch.no_grad():
            agree += generated[0, 1:].tolist() == list(trace.output_ids)
            src = torch.tensor([source_ids])
            tgt = torch.tensor([[core.config.bos_id, *trace.output_ids[:-1]]])
            src_mask = padding_mask(src, core.config.pad_id)
            encoded = core.encode(src, src_mask, output_attentions=True)
            decoded = core.decode(
                tgt, encoded.memory, src_mask, decoder_mask(tgt, core.config.pad_id), output_attentions=True
            )
            out = model(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
        logits = max(logits, float((core.project(decoded.hidden) - out.logits).abs().max()))
        ours = [*encoded.self_attentions, *decoded.self_attentions, *decoded.cross_attentions]
        theirs = [*out.encoder_attentions, *out.decoder_attentions, *out.cross_attentions]
        for mine, reference in zip(ours, theirs, strict=True):
            attention = max(attention, float((mine.weights - reference).abs().max()))
    return {"logits": logits, "attention": attention, "greedy": f"{agree}/{len(SENTENCES[direction])}"}


def bleu(checkpoint, direction: str, data: Path, split: str) -> float | None:
    """sacreBLEU of the core's greedy translations of the split (None where --data lacks it)."""
    source, target = direction.split("-")
    files = data / f"{split}.{source}", data / f"{split}.{target}"
    if not all(path.is_file() for path in files):
        return None
    sources, references = (path.read_text(encoding="utf-8").splitlines() for path in files)
    return score(translate_batch(checkpoint.model, checkpoint.tokenizer, sources, direction), references)["bleu"]


def card_figure(checkpoint, split: str) -> str:
    """The card's BLEU for this test set, as published ("not on the card" where it lists none)."""
    key = split.split("_")[0].lower() if split.startswith("test_") else split.lower()
    rows = checkpoint.metrics.get("published_scores") or []
    for row in rows:
        testset = str(row.get("testset", "")).lower()
        if "multi30k" in testset and key in testset:
            return f"{row.get('BLEU')} ({row.get('testset')})"
    return f"not on the card ({len(rows)} rows, none for Multi30k)"


@torch.no_grad()  # nothing here trains: and the caller's grad mode is left as it was
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check OPUS-MT from the Hub against transformers and Multi30k.")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "multi30k")
    parser.add_argument("--split", default="test_2016_flickr", help="SPLIT.de / SPLIT.en in --data")
    args = parser.parse_args(argv)
    rows = []
    for direction, (repo, revision) in OPUS_MT_REPOS.items():
        try:
            folder = download_marian(repo, revision)
            checkpoint = load_opus_mt(direction)
        except MarianDownloadError:
            print(NO_HUB)
            return 2
        peer = peer_of(folder)
        compared = compare(checkpoint, peer, direction) if peer else None
        measured = bleu(checkpoint, direction, args.data, args.split)
        rows.append(
            [
                f"{repo}{f'@{revision}' if revision else ''}",
                f"{compared['logits']:.1e}" if compared else "no transformers",
                f"{compared['attention']:.1e}" if compared else "no transformers",
                compared["greedy"] if compared else "no transformers",
                f"{measured:.2f}" if measured is not None else f"no {args.split} in {args.data}",
                card_figure(checkpoint, args.split),
            ]
        )
    header = [
        "model",
        "logits, max |diff|",
        "attention, max |diff|",
        "greedy tokens equal",
        f"{args.split} BLEU (greedy, this core)",
        "the card's figure",
    ]
    print("| " + " | ".join(header) + " |\n|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"Equal within {TOLERANCE:g} where both differences are below it and every greedy sentence agrees.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
