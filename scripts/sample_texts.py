"""Sample sentences of an exact number of subword tokens, for timing the model on inputs of a chosen size
(the benchmarks in benchmarks/ and the per-job GPU seconds of scripts/job_seconds.py)."""

from __future__ import annotations

TEXTS = {
    "de": (
        "Ein älterer Mann mit einem blauen Hut sitzt auf einer Bank im Park und füttert die Tauben, "
        "während zwei kleine Kinder neben ihm mit einem roten Ball spielen und laut lachen. Auf der "
        "anderen Seite des Weges verkauft eine junge Frau frisches Obst und Gemüse an einem hölzernen "
        "Stand, und ein Hund wartet geduldig darauf, dass sein Besitzer vom Einkaufen zurückkommt. "
        "Später am Nachmittag beginnt es zu regnen, die Menschen öffnen ihre Regenschirme und laufen "
        "schnell zur nächsten Haltestelle, um den Bus in die Stadt nicht zu verpassen."
    ),
    "en": (
        "An older man wearing a blue hat is sitting on a bench in the park and feeding the pigeons, "
        "while two small children play next to him with a red ball and laugh loudly. On the other side "
        "of the path a young woman is selling fresh fruit and vegetables at a wooden stand, and a dog "
        "waits patiently for its owner to come back from shopping. Later in the afternoon it starts to "
        "rain, the people open their umbrellas and run quickly to the next stop so that they do not "
        "miss the bus into the city."
    ),
}
SOURCE_LANGUAGE = {"de-en": "de", "en-de": "en"}


def text_of_tokens(tokenizer, language: str, n_tokens: int, skip_words: int = 0) -> str:
    """A prefix of TEXTS[language] (after its first `skip_words` words) of exactly n_tokens subwords.

    Cutting ids and decoding can re-tokenize differently at the cut, so id cuts near n_tokens are
    tried first (those that decode to a prefix of the text), then whole-word prefixes; ValueError when
    none gives exactly n_tokens.
    """
    text = " ".join(TEXTS[language].split()[skip_words:])
    ids = tokenizer.encode(text)
    if len(ids) < n_tokens:
        raise ValueError(f"the {language} text has only {len(ids)} tokens with this tokenizer; asked for {n_tokens}")
    candidates = [tokenizer.decode(ids[:cut]) for cut in range(n_tokens, max(n_tokens - 8, 0), -1)]
    candidates += [tokenizer.decode(ids[:cut]) for cut in range(n_tokens + 1, min(n_tokens + 8, len(ids)) + 1)]
    # a decoded cut must be the text's own prefix (a tokenizer that decodes with another language's model, as
    # OPUS-MT's target.spm, may spell source pieces differently); then whole-word prefixes
    words = text.split()
    candidates = [c for c in candidates if text.startswith(c)] + [" ".join(words[:n]) for n in range(1, len(words))]
    for candidate in candidates:
        if len(tokenizer.encode(candidate)) == n_tokens:
            return candidate
    raise ValueError(f"could not cut the {language} text to exactly {n_tokens} tokens")
