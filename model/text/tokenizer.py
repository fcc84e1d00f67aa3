"""One shared German+English subword tokenizer (section 3.4 shares one vocabulary).

BPE trained with Hugging Face `tokenizers`, SentencePiece-style: spaces become "▁" so tokens
read naturally ("▁Mann"), and with byte fallback, so any input (emoji, Chinese, a NUL byte)
encodes to known ids: characters the vocabulary lacks become their UTF-8 bytes <0xNN>.

Special tokens: [PAD] [BOS] [EOS] [UNK] and one target-language tag per direction. The tag is
the first source token ("<2en> Ein Mann ..."), so ONE model translates both ways.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

PAD, BOS, EOS, UNK = "[PAD]", "[BOS]", "[EOS]", "[UNK]"
LANGUAGES = {"de": "German", "en": "English"}
DIRECTIONS = ("de-en", "en-de")
LANGUAGE_TAGS = {language: f"<2{language}>" for language in LANGUAGES}
SPECIAL_TOKENS = [PAD, BOS, EOS, UNK, *LANGUAGE_TAGS.values()]  # ids 0..5, matching TransformerConfig
BYTE_TOKENS = [f"<0x{byte:02X}>" for byte in range(256)]
WORD_BOUNDARY = "\u2581"  # ▁


def parse_direction(direction: str) -> tuple[str, str]:
    """'de-en' -> ('de', 'en'); a clear error for anything else."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    source, target = direction.split("-")
    return source, target


class SubwordTokenizer:
    """A thin wrapper over `tokenizers.Tokenizer` that knows this project's special tokens
    (model/text/interface.py's TranslationTokenizer, plus what only this model has: BOS, language tags)."""

    special_tokens = frozenset(SPECIAL_TOKENS)
    directions = DIRECTIONS

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        missing = [t for t in SPECIAL_TOKENS if tokenizer.token_to_id(t) is None]
        if missing:
            raise ValueError(f"tokenizer lacks special token(s): {', '.join(missing)}")
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = (tokenizer.token_to_id(t) for t in (PAD, BOS, EOS, UNK))
        self.special_ids = {tokenizer.token_to_id(t) for t in SPECIAL_TOKENS}

    # ----------------------------------------------------------------- building and files
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2) -> "SubwordTokenizer":
        """Learn BPE merges on the given texts; 256 byte tokens are always included."""
        if vocab_size < len(SPECIAL_TOKENS) + len(BYTE_TOKENS) + 50:
            raise ValueError(f"vocab_size {vocab_size} is too small (byte fallback alone needs 256 ids)")
        tokenizer = Tokenizer(models.BPE(unk_token=UNK, byte_fallback=True))
        tokenizer.normalizer = normalizers.NFC()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=WORD_BOUNDARY, prepend_scheme="always")
        tokenizer.decoder = decoders.Sequence(
            [
                decoders.Replace(WORD_BOUNDARY, " "),
                decoders.ByteFallback(),
                decoders.Fuse(),
                decoders.Strip(" ", 1, 0),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size - len(BYTE_TOKENS),
            min_frequency=min_frequency,
            special_tokens=SPECIAL_TOKENS,
            show_progress=False,
        )
        tokenizer.train_from_iterator(texts, trainer)
        # Byte fallback needs <0x00>..<0xFF> as ordinary vocabulary entries: append them.
        data = json.loads(tokenizer.to_str())
        vocab = data["model"]["vocab"]
        for token in BYTE_TOKENS:
            if token not in vocab:
                vocab[token] = len(vocab)
        return cls(Tokenizer.from_str(json.dumps(data)))

    @classmethod
    def load(cls, path: str | Path) -> "SubwordTokenizer":
        """Read tokenizer.json (plain JSON: nothing in it can run code)."""
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as error:  # tokenizers raises its own Exception type for bad files
            raise ValueError(f"cannot read tokenizer {path}: {error}") from None

    def save(self, path: str | Path) -> None:
        self.tokenizer.save(str(path))

    # ----------------------------------------------------------------- encoding and decoding
    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    @property
    def decoder_start_id(self) -> int:
        """[BOS]: the decoder's first input."""
        return self.bos_id

    def language_tag_id(self, language: str) -> int:
        if language not in LANGUAGE_TAGS:
            raise ValueError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
        return self.tokenizer.token_to_id(LANGUAGE_TAGS[language])

    def encode(self, text: str) -> list[int]:
        """Subword ids of a text, without special tokens."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def frame_source(self, subwords: list[int], target_language: str) -> list[int]:
        """Encoder input from subword ids: [<2xx>] + subwords + [EOS]."""
        return [self.language_tag_id(target_language), *subwords, self.eos_id]

    def frame_target(self, subwords: list[int]) -> list[int]:
        """Decoder sequence from subword ids: [BOS] + subwords + [EOS] (inputs are [:-1], labels [1:])."""
        return [self.bos_id, *subwords, self.eos_id]

    def encode_source(self, text: str, target_language: str) -> list[int]:
        return self.frame_source(self.encode(text), target_language)

    def encode_target(self, text: str) -> list[int]:
        return self.frame_target(self.encode(text))

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenized text; special tokens are dropped."""
        return self.tokenizer.decode([i for i in ids if i not in self.special_ids], skip_special_tokens=False)

    def id_to_token(self, token_id: int) -> str:
        return self.tokenizer.id_to_token(int(token_id))

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The tokens as the vocabulary spells them ("▁Mann", "<0xF0>", "[EOS]")."""
        return [self.id_to_token(i) for i in ids]
