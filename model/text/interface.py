"""What the rest of the project may ask of a tokenizer: the interface both tokenizers satisfy.

`SubwordTokenizer` (model/text/tokenizer.py) is the project's own: one BPE vocabulary for German and
English, a target-language tag first in the source, [BOS] first in the decoder. `MarianTokenizer`
(model/text/marian_tokenizer.py) is an OPUS-MT checkpoint's: two SentencePiece models, one shared
vocabulary, no tag and no BOS (the decoder starts from <pad>), one direction per model.

Code that must work with either takes a `TranslationTokenizer` and uses only what is declared here.
What only the own tokenizer has (`bos_id`, `language_tag_id`, the byte-fallback tokens, the wrapped
`tokenizers.Tokenizer` as `.tokenizer`) belongs to code that only the own model runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable


@runtime_checkable
class TranslationTokenizer(Protocol):
    """Text <-> ids for one encoder-decoder checkpoint."""

    pad_id: int  # padding: the encoder's padding mask hides it
    eos_id: int  # ends the source, and a translation when generated
    unk_id: int  # a piece the vocabulary lacks
    special_ids: set[int]  # ids `decode` leaves out of the text

    @property
    def decoder_start_id(self) -> int:
        """The decoder's first input id ([BOS] for the own model, <pad> for Marian)."""
        ...

    @property
    def special_tokens(self) -> frozenset[str]:
        """Token strings the views mark as special ([EOS], language tags, </s>, ...)."""
        ...

    @property
    def directions(self) -> tuple[str, ...]:
        """The directions this tokenizer frames sources for, as "de-en"."""
        ...

    @property
    def vocab_size(self) -> int: ...

    def encode(self, text: str) -> list[int]:
        """Source-language subword ids of a text, without special tokens."""
        ...

    def frame_source(self, subwords: list[int], target_language: str) -> list[int]:
        """Encoder input from source subword ids (ends with `eos_id`)."""
        ...

    def frame_target(self, subwords: list[int]) -> list[int]:
        """Decoder sequence [decoder_start_id] + subwords + [eos_id]: inputs are [:-1], labels [1:]."""
        ...

    def encode_source(self, text: str, target_language: str) -> list[int]: ...

    def encode_target(self, text: str) -> list[int]:
        """A target-language text as `frame_target` frames it."""
        ...

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenized text; `special_ids` are left out."""
        ...

    def id_to_token(self, token_id: int) -> str: ...

    def tokens(self, ids: Iterable[int]) -> list[str]:
        """The tokens as the vocabulary spells them."""
        ...
