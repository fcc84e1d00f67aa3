"""A full-size OPUS-MT-shaped checkpoint folder with random weights: timing and memory without the Hub's files.

Helsinki-NLP/opus-mt-de-en and opus-mt-en-de are Transformer-base models with a 58,101-piece vocabulary
(docs/opus-mt.md). This folder has their shape and their config.json and generation_config.json fields
(tests/support/marian_hub_folder.py holds the published fields): d_model 512, 6 + 6 layers, 8 heads, d_ff 2048,
swish, the shared embedding, `<pad>` = 58,100 as the start token, `</s>` forced at the limit. The weights are
`transformers`' own MarianMTModel initialisation from a fixed seed, saved by `save_pretrained` as
model.safetensors (298 MB), as the Hub's conversion stores them. The SentencePiece models are trained on the
benchmark texts (benchmarks/common.py) and the test folder's lines, and vocab.json is filled up to 58,101 ids
with pieces no text produces, so the embedding and the output projection have the real size.

The translations are nonsense: the folder is for timing and memory only. `ends=False` sets the logits bias of
`</s>` to -30, so every translation runs to the app's step limit (2 x source + 10 tokens): the slowest case of a
source of that length. `transformers` is imported only here, as in the tests; the app never needs it.

    python -m benchmarks.opus_mt_folder /tmp/opus-mt-de-en [--direction de-en]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import sentencepiece

from .common import ROOT, TEXTS

sys.path.insert(0, str(ROOT / "tests" / "support"))  # the published fields and the vocabulary builder
import marian_hub_folder  # noqa: E402

# The published models' sizes (docs/opus-mt.md, config.json).
FULL_SIZES = {
    "d_model": 512,
    "encoder_attention_heads": 8,
    "decoder_attention_heads": 8,
    "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048,
    "encoder_layers": 6,
    "decoder_layers": 6,
}
FULL_VOCAB = 58_101
SPM_PIECES = 400  # SentencePiece's vocabulary, trained on a few lines (hard_vocab_limit=false: fewer where it must)
SEED = 0
NEVER_ENDS_BIAS = -30.0  # logits bias of </s> with ends=False: e^-30 against the other ~58,000 tokens


def training_lines(language: str) -> list[str]:
    """The benchmark text of `language` cut into sentences, and the test folder's lines of that language."""
    sentences = [part.strip() + "." for part in TEXTS[language].split(".") if part.strip()]
    return sentences + marian_hub_folder.sentences(language)


def write_tokenizer_files(directory: Path, direction: str, vocab_size: int) -> dict[str, int]:
    """source.spm, target.spm, tokenizer_config.json and a vocab.json of exactly `vocab_size` ids: marian-vocab's
    order over the trained pieces (marian_hub_folder.marian_vocab), unused fillers, then <pad> last."""
    source, target = direction.split("-")
    models = {
        "source.spm": marian_hub_folder.train_sentencepiece(training_lines(source), SPM_PIECES),
        "target.spm": marian_hub_folder.train_sentencepiece(training_lines(target), SPM_PIECES),
    }
    for name, proto in models.items():
        (directory / name).write_bytes(proto)
    cutters = {name: sentencepiece.SentencePieceProcessor(model_proto=proto) for name, proto in models.items()}
    segmented = [
        *(cutters["source.spm"].encode(line, out_type=str) for line in training_lines(source)),
        *(cutters["target.spm"].encode(line, out_type=str) for line in training_lines(target)),
    ]
    vocab = marian_hub_folder.marian_vocab(segmented)
    vocab.pop(marian_hub_folder.PAD)
    if len(vocab) >= vocab_size:
        raise ValueError(f"the trained pieces ({len(vocab)}) do not fit a vocabulary of {vocab_size}")
    for index in range(len(vocab), vocab_size - 1):
        vocab[f"\u2581unused{index}"] = index
    vocab[marian_hub_folder.PAD] = vocab_size - 1
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (directory / "tokenizer_config.json").write_text(json.dumps({"target_lang": target, "source_lang": source}))
    return vocab


def build_opus_mt_folder(
    directory: str | Path,
    direction: str = "de-en",
    sizes: dict | None = None,
    vocab_size: int = FULL_VOCAB,
    ends: bool = False,
    seed: int = SEED,
) -> Path:
    """Write an OPUS-MT-shaped folder (full size by default; `sizes` and `vocab_size` shrink it for tests)."""
    import torch
    import transformers

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = write_tokenizer_files(directory, direction, vocab_size)
    fields = {**marian_hub_folder.marian_config_fields(len(vocab)), **(FULL_SIZES if sizes is None else sizes)}
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(transformers.MarianConfig(**fields)).eval()
    if not ends:
        with torch.no_grad():
            model.final_logits_bias[0, fields["eos_token_id"]] = NEVER_ENDS_BIAS
    model.generation_config = transformers.GenerationConfig(**marian_hub_folder.generation_fields(len(vocab)))
    model.save_pretrained(directory)  # model.safetensors, config.json, generation_config.json
    # transformers 5 keeps generation settings out of config.json; the published files have them in both.
    config_file = directory / "config.json"
    saved = json.loads(config_file.read_text(encoding="utf-8"))
    saved.update({key: fields[key] for key in ("bad_words_ids", "max_length", "num_beams")})
    config_file.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.opus_mt_folder", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="where to write the folder (created)")
    parser.add_argument("--direction", choices=("de-en", "en-de"), default="de-en")
    parser.add_argument(
        "--ends", action="store_true", help="keep </s> reachable (default: every output runs to the limit)"
    )
    args = parser.parse_args(argv)
    folder = build_opus_mt_folder(args.directory, args.direction, ends=args.ends)
    size = sum(path.stat().st_size for path in folder.iterdir()) / 2**20
    print(f"wrote {folder} ({size:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
