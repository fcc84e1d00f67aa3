"""The tokenizer of a Marian (OPUS-MT) checkpoint: two SentencePiece models and one shared vocabulary.

An OPUS-MT folder (docs/opus-mt.md) holds `source.spm`, the SentencePiece model that cut the source
language for training, `target.spm`, the one that cut the target language, and `vocab.json`, the shared
vocabulary the embedding rows follow: piece -> id, with `</s>` = 0, `<unk>` = 1, the pieces by their
count in the training data, and `<pad>` last. Ids are read from `vocab.json`, never from SentencePiece's
own numbering; a piece the vocabulary lacks (a character SentencePiece never saw comes out as itself)
becomes `<unk>`. There is no byte fallback, no BOS, and no language tag: one model translates one
direction, `</s>` closes the source, and the decoder starts from `<pad>`.

This reproduces `transformers.MarianTokenizer` (tokenization_marian.py, transformers 5.24) without
`transformers`, reading the files with the `sentencepiece` package: the same ids and token strings for
source and target text, and the same text back from `decode(ids, skip_special_tokens=True)`
(tests/model/text/test_marian_tokenizer.py compares them). Like it, literal special-token strings typed
in the text ("</s>") are their special ids, a leading ">>xx<<" language code is one piece, and no Moses
punctuation normalisation is applied (transformers defines one but never calls it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import sentencepiece

SOURCE_SPM, TARGET_SPM, VOCAB_FILE, TOKENIZER_CONFIG = "source.spm", "target.spm", "vocab.json", "tokenizer_config.json"
EOS, UNK, PAD = "</s>", "<unk>", "<pad>"
SPECIAL_TOKENS = frozenset({EOS, UNK, PAD})
WORD_BOUNDARY = "\u2581"  # ▁, SentencePiece's mark of a piece that starts a word
_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(token) for token in sorted(SPECIAL_TOKENS)) + ")")


def _load_spm(path: Path) -> sentencepiece.SentencePieceProcessor:
    if not path.is_file():
        raise ValueError(f"Marian tokenizer: {path.name} is missing from {path.parent}")
    try:
        return sentencepiece.SentencePieceProcessor(model_file=str(path))
    except (OSError, RuntimeError) as error:  # sentencepiece reports a bad model file as either
        raise ValueError(f"Marian tokenizer: {path} is not a SentencePiece model ({error})") from None


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"Marian tokenizer: cannot read {path} ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"Marian tokenizer: {path} is not a JSON object")
    return data


def _check_vocab(vocab: dict, where: str) -> dict[str, int]:
    """piece -> id, ids exactly 0 .. V-1 (one embedding row each), the three special tokens present."""
    if not all(isinstance(piece, str) and type(index) is int for piece, index in vocab.items()):
        raise ValueError(f"Marian tokenizer: {where} must map strings to integer ids")
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise ValueError(f"Marian tokenizer: the ids in {where} are not 0 .. {len(vocab) - 1}, each once")
    missing = sorted(SPECIAL_TOKENS - vocab.keys())
    if missing:
        raise ValueError(f"Marian tokenizer: {where} lacks {', '.join(missing)}")
    return vocab


class MarianTokenizer:
    """source.spm + target.spm + vocab.json of one OPUS-MT direction, behind TranslationTokenizer."""

    special_tokens = SPECIAL_TOKENS

    def __init__(
        self,
        source_model: sentencepiece.SentencePieceProcessor,
        target_model: sentencepiece.SentencePieceProcessor,
        vocab: dict[str, int],
        source_language: str,
        target_language: str,
    ):
        self.source_model, self.target_model = source_model, target_model
        self.vocab = _check_vocab(vocab, VOCAB_FILE)
        self.pieces = sorted(self.vocab, key=self.vocab.__getitem__)  # id -> piece
        self.source_language, self.target_language = source_language, target_language
        self.pad_id, self.eos_id, self.unk_id = self.vocab[PAD], self.vocab[EOS], self.vocab[UNK]
        self.special_ids = {self.vocab[token] for token in SPECIAL_TOKENS}

    @classmethod
    def load(cls, directory: str | Path, direction: str | None = None) -> "MarianTokenizer":
        """Read an OPUS-MT folder. The languages come from tokenizer_config.json (source_lang, target_lang)
        or, where it has none, from `direction` ("de-en"); a folder with separate source and target
        vocabularies is refused (the core shares one embedding)."""
        directory = Path(directory)
        config = _read_json(directory / TOKENIZER_CONFIG) if (directory / TOKENIZER_CONFIG).is_file() else {}
        if config.get("separate_vocabs"):
            raise ValueError(
                f"Marian tokenizer: {directory} has separate source and target vocabularies "
                "(separate_vocabs: true); only a shared vocab.json is supported"
            )
        languages = (config.get("source_lang"), config.get("target_lang"))
        if not all(languages):
            if direction is None or direction.count("-") != 1:
                raise ValueError(
                    f"Marian tokenizer: {TOKENIZER_CONFIG} in {directory} names no source_lang and target_lang; "
                    "give the direction (as de-en)"
                )
            languages = tuple(direction.split("-"))
        return cls(
            _load_spm(directory / SOURCE_SPM),
            _load_spm(directory / TARGET_SPM),
            _read_json(directory / VOCAB_FILE),
            *languages,
        )

    # ----------------------------------------------------------------- what the decoder and views need
    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    @property
    def decoder_start_id(self) -> int:
        """<pad>: Marian's decoder starts from it (config.json's decoder_start_token_id) and never generates it."""
        return self.pad_id

    @property
    def directions(self) -> tuple[str, ...]:
        return (f"{self.source_language}-{self.target_language}",)

    # ----------------------------------------------------------------- encoding
    def _ids(self, text: str, model: sentencepiece.SentencePieceProcessor) -> list[int]:
        """Ids of `text` cut by `model`: special-token strings are their ids, other pieces are looked up."""
        ids = []
        for chunk in _SPECIAL_SPLIT.split(text):
            if chunk in SPECIAL_TOKENS:
                ids.append(self.vocab[chunk])
            elif chunk:
                code, rest = _language_code(chunk)
                pieces = [*code, *model.encode(rest, out_type=str)]
                ids.extend(self.vocab.get(piece, self.unk_id) for piece in pieces)
        return ids

    def encode(self, text: str) -> list[int]:
        """Source-language subword ids (source.spm), without </s>."""
        return self._ids(text, self.source_model)

    def encode_target_subwords(self, text: str) -> list[int]:
        """Target-language subword ids (target.spm), without </s>."""
        return self._ids(text, self.target_model)

    def frame_source(self, subwords: list[int], target_language: str) -> list[int]:
        """Encoder input: subwords + [</s>]; `target_language` must be this model's (no tag is added)."""
        if target_language != self.target_language:
            raise ValueError(
                f"this model translates {self.directions[0]} only; it cannot translate into {target_language!r}"
            )
        return [*subwords, self.eos_id]

    def frame_target(self, subwords: list[int]) -> list[int]:
        """Decoder sequence [<pad>] + subwords + [</s>] (inputs are [:-1], labels [1:])."""
        return [self.decoder_start_id, *subwords, self.eos_id]

    def encode_source(self, text: str, target_language: str) -> list[int]:
        return self.frame_source(self.encode(text), target_language)

    def encode_target(self, text: str) -> list[int]:
        return self.frame_target(self.encode_target_subwords(text))

    # ----------------------------------------------------------------- decoding
    def decode(self, ids: Iterable[int]) -> str:
        """Detokenized target text: special ids (</s>, <unk>, <pad>) left out, the pieces joined by
        target.spm, every ▁ a space, outer spaces stripped."""
        pieces = [self.id_to_token(i) for i in ids if int(i) not in self.special_ids]
        return self.target_model.decode_pieces(pieces).replace(WORD_BOUNDARY, " ").strip()

    def id_to_token(self, token_id: int) -> str:
        token_id = int(token_id)
        if not 0 <= token_id < len(self.pieces):
            raise ValueError(f"token id {token_id} is outside the vocabulary (0 .. {len(self.pieces) - 1})")
        return self.pieces[token_id]

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The tokens as vocab.json spells them ("▁Mann", "</s>", "<unk>")."""
        return [self.id_to_token(i) for i in ids]


def _language_code(text: str) -> tuple[list[str], str]:
    """A leading ">>xx<<" (multilingual OPUS-MT's target code) as its own piece, as transformers cuts it."""
    end = text.find("<<") if text.startswith(">>") else -1
    return ([text[: end + 2]], text[end + 2 :]) if end != -1 else ([], text)
