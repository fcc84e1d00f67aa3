"""A small OPUS-MT checkpoint folder, laid out as the Hub's Helsinki-NLP/opus-mt-de-en and opus-mt-en-de are.

Built in the test with no network (the tokenizer files alone in a tenth of a second, the whole folder in
seconds): two SentencePiece models trained here on the German and English lines below (`source.spm` for the
source language, `target.spm` for the target), the shared `vocab.json` built the way the OPUS-MT pipeline
builds it, and a `transformers.MarianMTModel` with the published models' config fields and flags
(docs/opus-mt.md) at small sizes, weights from a fixed seed (transformers' initialisation, 60 Adam steps on
the lines below, a random logits bias), saved by
`save_pretrained` as `model.safetensors` + `config.json` + `generation_config.json`.

How the vocabulary is built (docs/opus-mt.md): OPUS-MT-train segments the training text with each side's
SentencePiece model and counts the pieces with `marian-vocab`, which writes `</s>` = 0, `<unk>` = 1, then
every piece by decreasing count (ties in string order); the conversion to `transformers` appends `<pad>`
as the last id. So ids are not SentencePiece's own numbering, a piece SentencePiece can produce may be
missing (it becomes `<unk>`), and `<pad>` = vocab_size - 1 doubles as the decoder's start token.

`transformers` is imported only inside `build_folder` and `load_peer`: a test dependency, never the app's.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import sentencepiece

EOS, UNK, PAD = "</s>", "<unk>", "<pad>"
SEED = 42
TRAIN_STEPS = 60
LEARNING_RATE = 1e-2
LOGITS_BIAS_SCALE = 0.2

# Parallel lines (German, English), everyday sentences with umlauts, ß, digits and punctuation.
PAIRS = [
    ("Ein Mann fährt Fahrrad.", "A man rides a bike."),
    ("Eine Frau liest ein Buch im Garten.", "A woman reads a book in the garden."),
    ("Zwei Hunde spielen im Schnee.", "Two dogs play in the snow."),
    ("Ein Kind isst einen grünen Apfel.", "A child eats a green apple."),
    ("Die Straße ist nass, weil es regnet.", "The street is wet because it is raining."),
    ("Wie spät ist es?", "What time is it?"),
    ("Ich habe Hunger und Durst.", "I am hungry and thirsty."),
    ("Grüße aus Köln!", "Greetings from Cologne!"),
    ("Ein Mädchen springt über eine Pfütze.", "A girl jumps over a puddle."),
    ("Männer arbeiten auf einer Baustelle.", "Men are working on a construction site."),
    ("Ein Hund läuft am Strand entlang.", "A dog runs along the beach."),
    ("Wir gehen morgen ins Kino.", "We are going to the cinema tomorrow."),
    (
        "Das Tier überquerte die Straße nicht, weil es zu müde war.",
        "The animal didn't cross the street because it was too tired.",
    ),
    ("Der Zug fährt um 10:45 Uhr ab.", "The train leaves at 10:45."),
    ("Sie kauft drei Äpfel und zwei Birnen.", "She buys three apples and two pears."),
    ("Mein Bruder wohnt in München.", "My brother lives in Munich."),
    ("Die Kinder singen ein fröhliches Lied.", "The children sing a happy song."),
    ("Ist das Wasser heiß genug?", "Is the water hot enough?"),
    ("Ein alter Mann sitzt auf einer Bank.", "An old man sits on a bench."),
    ("Das Wetter ist heute schön.", "The weather is nice today."),
    ("Kannst du mir bitte helfen?", "Can you help me, please?"),
    ("Eine Katze schläft auf dem Sofa.", "A cat sleeps on the sofa."),
    ("Die Brücke ist 300 Meter lang.", "The bridge is 300 meters long."),
    ("Er trinkt jeden Morgen einen Kaffee.", "He drinks a coffee every morning."),
    ("Wir haben das Spiel gewonnen!", "We won the game!"),
    ("Die Tür ist offen; komm herein.", "The door is open; come in."),
    ("Ein Junge wirft einen roten Ball.", "A boy throws a red ball."),
    ("Das Essen schmeckt sehr gut.", "The food tastes very good."),
    ("Sie läuft schneller als ihr Vater.", "She runs faster than her father."),
    ("Viele Menschen warten auf den Bus.", "Many people are waiting for the bus."),
    ("Der Fluss fließt durch die Stadt.", "The river flows through the city."),
    ("Ich lerne seit zwei Jahren Deutsch.", "I have been learning German for two years."),
    ("Zwei Frauen tragen schwere Taschen.", "Two women carry heavy bags."),
    ("Das Fenster ist zu breit für den Raum.", "The window is too wide for the room."),
    ("Aufmerksamkeit ist alles, was du brauchst.", "Attention is all you need."),
    ("Öffne bitte das Fenster.", "Please open the window."),
    ("Der Schüler schreibt einen langen Aufsatz.", "The student writes a long essay."),
    ("Ein Vogel singt im Baum.", "A bird sings in the tree."),
    ("Was machst du am Wochenende?", "What are you doing at the weekend?"),
    ("Die Blumen blühen im Frühling.", "The flowers bloom in spring."),
]
LANGUAGE_INDEX = {"de": 0, "en": 1}

# The published OPUS-MT config.json fields (docs/opus-mt.md), sizes aside: the Helsinki-NLP/opus-mt-de-en and
# opus-mt-en-de files as converted by transformers' convert_marian_to_pytorch.py. The ids are filled in from the
# vocabulary (`marian_config_fields`).
PUBLISHED_FIELDS = {
    "activation_dropout": 0.0,
    "activation_function": "swish",
    "add_bias_logits": False,
    "add_final_layer_norm": False,
    "architectures": ["MarianMTModel"],
    "attention_dropout": 0.0,
    "bos_token_id": 0,
    "classif_dropout": 0.0,
    "classifier_dropout": 0.0,
    "decoder_layerdrop": 0.0,
    "dropout": 0.1,
    "encoder_layerdrop": 0.0,
    "eos_token_id": 0,
    "forced_eos_token_id": 0,
    "init_std": 0.02,
    "is_encoder_decoder": True,
    "max_length": 512,
    "max_position_embeddings": 512,
    "model_type": "marian",
    "normalize_before": False,
    "normalize_embedding": False,
    "num_beams": 4,
    "scale_embedding": True,
    "share_encoder_decoder_embeddings": True,
    "static_position_embeddings": True,
    "use_cache": True,
}
# Small sizes: the published models have d_model 512, 8 heads, d_ff 2048, 6 + 6 layers.
SMALL_SIZES = {
    "d_model": 32,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "encoder_layers": 2,
    "decoder_layers": 2,
}


def sentences(language: str) -> list[str]:
    """The German ("de") or English ("en") side of PAIRS."""
    return [pair[LANGUAGE_INDEX[language]] for pair in PAIRS]


def train_sentencepiece(lines: list[str], vocab_size: int = 120) -> bytes:
    """A unigram SentencePiece model (serialized), trained as OPUS-MT-train's lib/sentencepiece.mk trains
    one (`--character_coverage=1.0 --hard_vocab_limit=false`, SentencePiece's defaults otherwise: unigram,
    nmt_nfkc normalisation, ids <unk> 0, <s> 1, </s> 2)."""
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=vocab_size,
        character_coverage=1.0,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,  # errors only
    )
    return model.getvalue()


def marian_vocab(segmented: list[list[str]]) -> dict[str, int]:
    """piece -> id as marian-vocab counts a segmented corpus, plus <pad> as the last id (the conversion's).

    marian-vocab (marian-dev src/data/default_vocab.cpp) writes </s> 0 and <unk> 1, then the pieces by
    decreasing count, equal counts in string order; convert_marian_to_pytorch.py adds <pad> = max id + 1.
    """
    counts = Counter(piece for line in segmented for piece in line)
    ordered = sorted(counts, key=lambda piece: (-counts[piece], piece))
    vocab = {EOS: 0, UNK: 1}
    for piece in ordered:
        vocab.setdefault(piece, len(vocab))
    vocab[PAD] = len(vocab)
    return vocab


def write_tokenizer_files(directory: Path, direction: str) -> dict[str, int]:
    """source.spm, target.spm, vocab.json and tokenizer_config.json for `direction` ("de-en" or "en-de")."""
    source, target = direction.split("-")
    models = {
        "source.spm": train_sentencepiece(sentences(source)),
        "target.spm": train_sentencepiece(sentences(target)),
    }
    for name, proto in models.items():
        (directory / name).write_bytes(proto)
    segmented = [
        *(_pieces(models["source.spm"], line) for line in sentences(source)),
        *(_pieces(models["target.spm"], line) for line in sentences(target)),
    ]
    vocab = marian_vocab(segmented)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=2), encoding="utf-8")
    # The published repos' 42-byte tokenizer_config.json (convert_marian_to_pytorch.py's save_tokenizer_config).
    (directory / "tokenizer_config.json").write_text(json.dumps({"target_lang": target, "source_lang": source}))
    return vocab


def _pieces(proto: bytes, line: str) -> list[str]:
    return sentencepiece.SentencePieceProcessor(model_proto=proto).encode(line, out_type=str)


def marian_config_fields(vocab_size: int) -> dict:
    """config.json's fields for a vocabulary of `vocab_size` ids (<pad> = the last)."""
    pad = vocab_size - 1
    ids = {
        "vocab_size": vocab_size,
        "decoder_vocab_size": vocab_size,
        "pad_token_id": pad,
        "decoder_start_token_id": pad,
        "bad_words_ids": [[pad]],
    }
    return {**PUBLISHED_FIELDS, **SMALL_SIZES, **ids}


def generation_fields(vocab_size: int) -> dict:
    """generation_config.json as on the Hub (joaogante's "Adding generation config file(s)"), plus
    `renormalize_logits`, which a later Hub commit adds to it."""
    pad = vocab_size - 1
    return {
        "bad_words_ids": [[pad]],
        "bos_token_id": 0,
        "decoder_start_token_id": pad,
        "eos_token_id": 0,
        "forced_eos_token_id": 0,
        "max_length": 512,
        "num_beams": 4,
        "pad_token_id": pad,
        "renormalize_logits": True,
    }


def fit(model, tokenizer, direction: str, steps: int = TRAIN_STEPS, seed: int = SEED) -> None:
    """A few full-batch Adam steps on PAIRS from the seeded initialisation, so greedy decoding is not one token
    repeated: outputs differ between sentences, most end with </s> by themselves, some run to the length limit
    (where forced_eos_token_id ends them). Then what the conversion fixes: the <pad> row of the shared embedding
    is zero (the tied output projection trains it), and `final_logits_bias` (a buffer, not trained) becomes a
    seeded random vector with 0 at <pad>, so a loader that drops it is caught."""
    import torch

    source, target = direction.split("-")
    batch = tokenizer(sentences(source), text_target=sentences(target), return_tensors="pt", padding=True)
    pad = model.config.pad_token_id
    labels = batch["labels"].masked_fill(batch["labels"] == pad, -100)  # (B, T): -100 = not scored
    torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        model.model.shared.weight[pad].zero_()
        bias = LOGITS_BIAS_SCALE * torch.randn(model.final_logits_bias.shape, generator=generator)  # (1, V)
        bias[:, pad] = 0.0
        model.final_logits_bias.copy_(bias)


def build_folder(directory: Path, direction: str = "de-en", seed: int = SEED, steps: int = TRAIN_STEPS) -> Path:
    """Write a Hub-style OPUS-MT folder for `direction` into `directory` (created) and return it."""
    import torch
    import transformers

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = write_tokenizer_files(directory, direction)
    config = transformers.MarianConfig(**marian_config_fields(len(vocab)))
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(config)  # transformers' own initialisation, seeded
    fit(model, transformers.MarianTokenizer.from_pretrained(directory), direction, steps, seed)
    model.generation_config = transformers.GenerationConfig(**generation_fields(len(vocab)))
    model.save_pretrained(directory)  # model.safetensors, config.json, generation_config.json
    # transformers 5 keeps generation settings out of config.json; the published files have them in both.
    config_file = directory / "config.json"
    fields = json.loads(config_file.read_text(encoding="utf-8"))
    published = marian_config_fields(len(vocab))
    fields.update({key: published[key] for key in ("bad_words_ids", "max_length", "num_beams")})
    config_file.write_text(json.dumps(fields, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return directory


# A model card in the published cards' format (front matter, the "* name: value" lines, a "Benchmarks" table), with
# this test's own rows: not Helsinki-NLP's scores, only what a page that shows a card's table must show.
CARD_ROWS = {
    "de-en": [("newstest2018-ende.de.en", "12.3", "0.456"), ("Tatoeba.de.en", "65.4", "0.321")],
    "en-de": [("newstest2018-ende.en.de", "23.4", "0.567"), ("Tatoeba.en.de", "54.3", "0.210")],
}


def write_card(directory: Path, direction: str) -> Path:
    """README.md as the published OPUS-MT cards lay it out, holding CARD_ROWS[direction] as its Benchmarks."""
    source, target = direction.split("-")
    rows = "\n".join(f"| {testset} \t| {bleu} \t| {chrf} |" for testset, bleu, chrf in CARD_ROWS[direction])
    card = (
        f"---\ntags:\n- translation\nlicense: cc-by-4.0\n---\n\n### opus-mt-{direction}\n\n"
        f"* source languages: {source}\n* target languages: {target}\n\n*  dataset: opus\n"
        "* model: transformer-align\n* pre-processing: normalization + SentencePiece\n\n## Benchmarks\n\n"
        f"| testset               | BLEU  | chr-F |\n|-----------------------|-------|-------|\n{rows}\n"
    )
    path = Path(directory) / "README.md"
    path.write_text(card, encoding="utf-8")
    return path


def load_peer(directory: Path):
    """The folder's `transformers.MarianMTModel` with eager attention (every attention weight returned), eval mode."""
    import transformers

    return transformers.MarianMTModel.from_pretrained(directory, attn_implementation="eager").eval()


def load_peer_tokenizer(directory: Path):
    """The folder's `transformers.MarianTokenizer`."""
    import transformers

    return transformers.MarianTokenizer.from_pretrained(directory)


def peer_greedy(peer, tokenizer, text: str):
    """(source ids, generated ids (1, 1 + T): the start token <pad>, then the output) of the peer's greedy `generate`
    with the model's own rules (<pad> never generated, </s> forced at the limit) and the app's length budget."""
    from scripts.check_opus_mt import generate_greedy

    source_ids = tokenizer(text)["input_ids"]
    return source_ids, generate_greedy(peer, source_ids)
