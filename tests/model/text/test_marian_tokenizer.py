"""An OPUS-MT checkpoint's tokenizer (model/text/marian_tokenizer.py) against `transformers.MarianTokenizer`.

The folders are built here (tests/support/marian_hub_folder.py): SentencePiece models trained on a few
dozen German and English lines, vocab.json counted as marian-vocab counts it, so its ids differ from
SentencePiece's own numbering. For both directions and every text below (umlauts, punctuation, characters
neither model knows, typed special tokens, empty input):
- the source side (source.spm) gives the peer's ids and token strings, `</s>` last;
- the target side (target.spm, `text_target`) gives the peer's ids; the decoder starts from <pad>;
- `decode` gives the peer's text (skip_special_tokens=True), also for ids the peer model generated.
"""

from __future__ import annotations

import json

import pytest

import marian_hub_folder
from model.text.interface import TranslationTokenizer
from model.text.marian_tokenizer import MarianTokenizer

pytestmark = pytest.mark.filterwarnings("ignore:Recommended. pip install sacremoses")

TEXTS = {
    "german": "Ein Mann fährt Fahrrad.",
    "english": "A man rides a bike.",
    "umlauts_and_eszett": "Grüße aus Köln! Die Straße ist nass. ÄRGER ÜBER ÖL",
    "punctuation_and_digits": "„Straße“ – 3,5 km (seit 1999)… Wie spät ist es?!",
    "unknown_characters": "Ein Hund 🐕 läuft am Strand 一个 👍!",
    "decomposed_umlaut": "Mu\u0308nchen",  # SentencePiece's nmt_nfkc composes it
    "compatibility_characters": "ﬁ Ａ ½",
    "whitespace": "  two  spaces,\ta tab\nand a new line  ",
    "typed_special_tokens": "Hallo </s> Welt<unk>x <pad>",
    "language_code": ">>fr<< Hallo",
    "empty": "",
    "spaces_only": "   ",
    "punctuation_only": "?!",
}
DIRECTIONS = ("de-en", "en-de")


@pytest.fixture(scope="module", params=DIRECTIONS)
def tokenizer_folder(request, tmp_path_factory):
    """The tokenizer files of an OPUS-MT folder (no model: the tokenizer needs none)."""
    folder = tmp_path_factory.mktemp(f"opus-mt-{request.param}-tokenizer")
    marian_hub_folder.write_tokenizer_files(folder, request.param)
    return folder


@pytest.fixture(scope="module")
def pair(tokenizer_folder):
    """(this project's tokenizer, transformers' tokenizer) of the same folder."""
    return MarianTokenizer.load(tokenizer_folder), marian_hub_folder.load_peer_tokenizer(tokenizer_folder)


@pytest.mark.parametrize("name", TEXTS)
def test_source_ids_and_tokens_equal_the_peer(pair, name):
    ours, peer = pair
    text = TEXTS[name]
    ids = ours.encode_source(text, ours.target_language)
    assert ids == peer(text).input_ids
    assert ours.tokens(ids) == peer.convert_ids_to_tokens(ids)
    assert ids[-1] == ours.eos_id and ours.tokens(ids[-1:]) == ["</s>"]  # </s> closes the source
    assert ids[:-1] == ours.encode(text)


@pytest.mark.parametrize("name", TEXTS)
def test_target_ids_equal_the_peer_and_start_from_pad(pair, name):
    ours, peer = pair
    text = TEXTS[name]
    framed = ours.encode_target(text)
    assert framed[1:] == peer(text_target=text).input_ids  # the peer's labels: subwords + </s>
    assert framed[0] == ours.decoder_start_id == ours.pad_id == peer.pad_token_id
    assert ours.tokens(framed[:1]) == ["<pad>"]


@pytest.mark.parametrize("name", TEXTS)
def test_decode_equals_the_peer(pair, name):
    ours, peer = pair
    text = TEXTS[name]
    for ids in (ours.encode_source(text, ours.target_language), ours.encode_target(text)):
        expected = peer.decode(ids, skip_special_tokens=True)
        assert ours.decode(ids) == expected
        # transformers decodes a shared vocabulary with source.spm by default; target.spm gives the same text
        assert peer.decode(ids, skip_special_tokens=True, use_source_tokenizer=False) == expected


def test_the_two_sides_cut_text_differently(pair):
    """The sides differ (so a test can tell source.spm from target.spm), and vocab.json's ids are not
    SentencePiece's numbering (so a test can tell a lookup from `piece_to_id`)."""
    ours, _ = pair
    text = TEXTS["german"] + " " + TEXTS["english"]
    assert ours.encode(text) != ours.encode_target_subwords(text)
    pieces = ours.source_model.encode(text, out_type=str)
    assert [ours.vocab.get(p, ours.unk_id) for p in pieces] != [ours.source_model.piece_to_id(p) for p in pieces]


def test_unknown_characters_become_unk(pair):
    ours, _ = pair
    ids = ours.encode("🐕")
    assert ours.unk_id in ids and "<unk>" in ours.tokens(ids)
    assert ours.decode(ids) == ""  # <unk> is special: left out of the text, as transformers leaves it


def test_one_direction_no_tag(pair):
    ours, _ = pair
    assert ours.directions == (f"{ours.source_language}-{ours.target_language}",)
    assert ours.encode_source("Hallo", ours.target_language) == [*ours.encode("Hallo"), ours.eos_id]  # no tag
    with pytest.raises(ValueError, match="translates .* only"):
        ours.frame_source([], ours.source_language)


def test_both_tokenizers_satisfy_the_interface(pair, tiny_tokenizer):
    ours, _ = pair
    assert isinstance(ours, TranslationTokenizer)
    assert isinstance(tiny_tokenizer, TranslationTokenizer)
    assert tiny_tokenizer.decoder_start_id == tiny_tokenizer.bos_id
    assert ours.special_tokens == {"</s>", "<unk>", "<pad>"}
    assert ours.special_ids == {ours.eos_id, ours.unk_id, ours.pad_id} == {0, 1, ours.vocab_size - 1}
    assert ours.tokens(range(ours.vocab_size)) == sorted(ours.vocab, key=ours.vocab.get)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ours.id_to_token(ours.vocab_size)


def test_generated_ids_decode_as_the_peer_decodes_them(marian_de_en_folder):
    """Ids the peer model generates (greedy, its own generation rules): <pad> first, </s> last."""
    ours = MarianTokenizer.load(marian_de_en_folder)
    peer = marian_hub_folder.load_peer_tokenizer(marian_de_en_folder)
    model = marian_hub_folder.load_peer(marian_de_en_folder)
    generation = json.loads((marian_de_en_folder / "generation_config.json").read_text())
    assert ours.decoder_start_id == generation["decoder_start_token_id"]
    assert ours.vocab_size == json.loads((marian_de_en_folder / "config.json").read_text())["vocab_size"]
    for text in marian_hub_folder.sentences("de")[:3]:
        inputs = peer([text], return_tensors="pt")
        assert inputs.input_ids[0].tolist() == ours.encode_source(text, "en")
        generated = model.generate(**inputs, num_beams=1, do_sample=False, max_new_tokens=20)[0].tolist()
        assert generated[0] == ours.decoder_start_id
        assert ours.tokens(generated) == peer.convert_ids_to_tokens(generated)
        assert ours.decode(generated) == peer.decode(generated, skip_special_tokens=True)


# --------------------------------------------------------------------------- files that cannot be read
@pytest.fixture
def folder_copy(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    marian_hub_folder.write_tokenizer_files(source, "de-en")
    return source


def test_missing_target_model_is_named(folder_copy):
    (folder_copy / "target.spm").unlink()
    with pytest.raises(ValueError, match="target.spm is missing"):
        MarianTokenizer.load(folder_copy)


def test_a_file_that_is_not_a_sentencepiece_model_is_named(folder_copy):
    (folder_copy / "source.spm").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="source.spm is not a SentencePiece model"):
        MarianTokenizer.load(folder_copy)


def test_vocabulary_with_a_gap_is_refused(folder_copy):
    vocab = json.loads((folder_copy / "vocab.json").read_text())
    vocab["<pad>"] += 1
    (folder_copy / "vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(ValueError, match="not 0 .. "):
        MarianTokenizer.load(folder_copy)


def test_separate_vocabularies_are_refused(folder_copy):
    (folder_copy / "tokenizer_config.json").write_text(
        json.dumps({"source_lang": "de", "target_lang": "en", "separate_vocabs": True})
    )
    with pytest.raises(ValueError, match="separate_vocabs"):
        MarianTokenizer.load(folder_copy)


def test_languages_from_the_direction_when_the_config_has_none(folder_copy):
    (folder_copy / "tokenizer_config.json").unlink()
    with pytest.raises(ValueError, match="give the direction"):
        MarianTokenizer.load(folder_copy)
    assert MarianTokenizer.load(folder_copy, "de-en").directions == ("de-en",)
