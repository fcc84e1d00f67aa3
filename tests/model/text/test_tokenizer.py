"""The shared German+English subword tokenizer (section 3.4: one vocabulary for both languages).

- Any text survives encode -> decode: German and English with umlauts, ß, punctuation and digits,
  and, through byte fallback, emoji, Chinese, Arabic and control characters (never [UNK]).
- The encoder input is [<2xx>] + subwords + [EOS]; the decoder sequence is [BOS] + subwords + [EOS].
- Special ids agree with TransformerConfig; bad directions and languages are refused clearly;
  a saved tokenizer reloads to the same ids.
"""

from __future__ import annotations

import unicodedata

import pytest

from model.core.config import TransformerConfig
from model.text.tokenizer import LANGUAGE_TAGS, SPECIAL_TOKENS, SubwordTokenizer, parse_direction

TEXTS = {
    "german": "Grüße aus Köln! Die Straße ist 3,5 km lang; Mädchen & Jungen spielen (seit 1999).",
    "german_capitals": "ÄRGER ÜBER ÖL? Fuß, Maß, Spaß. GROẞ",
    "english": "A man rides a bike: it's 10:45 p.m., \"quite late\" - isn't it?",
    "emoji": "Ein Hund 🐕 läuft 🏃🏽‍♀️ am Strand 👍!",
    "chinese": "一个男人在骑自行车。",
    "arabic": "رجل يركب دراجة.",
    "control_characters": "tab\tnew line\nnul\x00 bell\x07 end",
    "inner_spaces": "two  spaces and a trailing one ",
    "empty": "",
}


@pytest.mark.parametrize("name", TEXTS)
def test_round_trip(tiny_tokenizer, name):
    text = TEXTS[name]
    ids = tiny_tokenizer.encode(text)
    assert tiny_tokenizer.unk_id not in ids  # byte fallback spells unknown characters as bytes
    assert not set(ids) & tiny_tokenizer.special_ids
    assert tiny_tokenizer.decode(ids) == text


def test_unknown_characters_become_utf8_bytes(tiny_tokenizer):
    tokens = tiny_tokenizer.tokens(tiny_tokenizer.encode("🐕"))
    assert tokens[-4:] == ["<0xF0>", "<0x9F>", "<0x90>", "<0x95>"]  # "🐕" is F0 9F 90 95 in UTF-8


def test_text_is_normalised_to_nfc(tiny_tokenizer):
    decomposed = "Mu\u0308nchen"  # "u" + combining diaeresis
    composed = unicodedata.normalize("NFC", decomposed)
    assert composed != decomposed
    assert tiny_tokenizer.encode(decomposed) == tiny_tokenizer.encode(composed)
    assert tiny_tokenizer.decode(tiny_tokenizer.encode(decomposed)) == composed


@pytest.mark.parametrize("target", ["en", "de"])
def test_encode_source_puts_language_tag_first_and_eos_last(tiny_tokenizer, target):
    text = "Ein Mann fährt Fahrrad."
    ids = tiny_tokenizer.encode_source(text, target)
    assert tiny_tokenizer.tokens(ids[:1]) == [LANGUAGE_TAGS[target]]
    assert ids[-1] == tiny_tokenizer.eos_id
    assert ids[1:-1] == tiny_tokenizer.encode(text)
    assert tiny_tokenizer.decode(ids) == text  # special tokens are dropped on decoding


def test_encode_target_is_bos_subwords_eos(tiny_tokenizer):
    ids = tiny_tokenizer.encode_target("A dog runs.")
    assert ids[0] == tiny_tokenizer.bos_id and ids[-1] == tiny_tokenizer.eos_id
    assert ids[1:-1] == tiny_tokenizer.encode("A dog runs.")


def test_special_ids_match_the_config_defaults(tiny_tokenizer):
    defaults = TransformerConfig()
    assert (tiny_tokenizer.pad_id, tiny_tokenizer.bos_id, tiny_tokenizer.eos_id, tiny_tokenizer.unk_id) == (
        defaults.pad_id,
        defaults.bos_id,
        defaults.eos_id,
        defaults.unk_id,
    )
    assert tiny_tokenizer.tokens(range(len(SPECIAL_TOKENS))) == SPECIAL_TOKENS


@pytest.mark.parametrize("direction,expected", [("de-en", ("de", "en")), ("en-de", ("en", "de"))])
def test_parse_direction_accepts_both_directions(direction, expected):
    assert parse_direction(direction) == expected


@pytest.mark.parametrize("direction", ["de-de", "fr-en", "DE-EN", "de_en", "en", "", " de-en", None])
def test_parse_direction_rejects_bad_directions(direction):
    with pytest.raises(ValueError, match="direction must be one of de-en, en-de"):
        parse_direction(direction)


def test_unknown_language_tag_is_refused(tiny_tokenizer):
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        tiny_tokenizer.encode_source("Bonjour", "fr")


def test_save_and_load_keep_every_id(tiny_tokenizer, tmp_path):
    path = tmp_path / "tokenizer.json"
    tiny_tokenizer.save(path)
    loaded = SubwordTokenizer.load(path)
    assert loaded.vocab_size == tiny_tokenizer.vocab_size
    for text in TEXTS.values():
        assert loaded.encode(text) == tiny_tokenizer.encode(text)


def test_unreadable_tokenizer_file_is_a_value_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="cannot read tokenizer"):
        SubwordTokenizer.load(path)


def test_too_small_vocabulary_is_refused():
    with pytest.raises(ValueError, match="too small"):
        SubwordTokenizer.train(["ein Text"], vocab_size=100)
