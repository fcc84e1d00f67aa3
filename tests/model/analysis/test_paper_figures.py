"""model/analysis/paper_figures.py: word -> subword mapping on hand-written token lists, the head search on a
planted pattern, and a run of the paper's sentences through the tiny model (no model-specific numbers).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from model.analysis.paper_figures import (
    PAPER_FIGURES,
    PAPER_LAYER,
    PAPER_LAYERS,
    figure_head_search,
    head_search,
    phrase_tokens,
    run_paper_figures,
    words,
)

# As the shipped tokenizer splits Figure 3's sentence (cut short), specials included.
FIGURE3_TOKENS = [
    "<2de>",
    "▁It",
    "▁is",
    "▁new",
    "▁law",
    "s",
    "▁s",
    "in",
    "ce",
    "▁2",
    "00",
    "9",
    "▁making",
    "▁the",
    "▁reg",
    "ist",
    "r",
    "ation",
    "▁more",
    "▁diff",
    "ic",
    "ult.",
    "[EOS]",
]
FIGURE4_TOKENS = [
    "<2de>",
    "▁The",
    "▁L",
    "aw",
    "▁will",
    "▁never",
    "▁be",
    "▁perfe",
    "ct",
    ",",
    "▁but",
    "▁its",
    "▁app",
    "l",
    "ic",
    "ation",
    "▁should",
    "▁be",
    "▁just",
    "▁",
    "-",
    "▁this",
    "[EOS]",
]


def test_words_group_subwords_and_skip_special_tokens():
    found = words(FIGURE4_TOKENS)
    assert [w.text for w in found[:4]] == ["The", "Law", "will", "never"]
    assert found[1].tokens == (2, 3)
    assert [w.text for w in found if w.tokens == (19, 20)] == ["-"]  # a lone ▁ joins the dash after it
    assert all(0 not in w.tokens and 22 not in w.tokens for w in found)


def test_words_join_byte_fallback_tokens():
    found = words(["<2en>", "▁Gr", "<0xC3>", "<0xBC>", "ße", "[EOS]"])
    assert [(w.text, w.tokens) for w in found] == [("Grüße", (1, 2, 3, 4))]


@pytest.mark.parametrize(
    "phrase, expected",
    [
        ("making", [12]),
        ("more difficult", [18, 19, 20, 21]),  # "ult." matches "difficult" without its full stop
        ("Making", [12]),
        ("laws since", [4, 5, 6, 7, 8]),
    ],
)
def test_phrase_tokens_on_figure3(phrase, expected):
    assert phrase_tokens(FIGURE3_TOKENS, phrase) == expected


def test_phrase_tokens_on_figure4_and_repeated_words():
    assert phrase_tokens(FIGURE4_TOKENS, "its") == [11]
    assert phrase_tokens(FIGURE4_TOKENS, "Law") == [2, 3]
    assert phrase_tokens(FIGURE4_TOKENS, "application") == [12, 13, 14, 15]
    assert phrase_tokens(FIGURE4_TOKENS, "be") == [6]
    assert phrase_tokens(FIGURE4_TOKENS, "be", occurrence=1) == [17]


def test_missing_phrases_get_a_clear_message():
    with pytest.raises(ValueError, match="not among the words"):
        phrase_tokens(FIGURE4_TOKENS, "difficult")
    with pytest.raises(ValueError, match="no words"):
        phrase_tokens(FIGURE4_TOKENS, " ... ")


def planted_stack(n_layers=3, n_heads=4, n_tokens=10, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n_layers, n_heads, n_tokens, n_tokens))
    return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)


@pytest.mark.parametrize("planted", [(0, 0), (1, 2), (2, 3)])
def test_the_head_with_the_planted_pattern_ranks_first(planted):
    stack = planted_stack()
    query, target = [4, 5], [8, 9]
    layer, head = planted
    for q in query:  # this head's query rows put 0.45 on each target and 0.1 elsewhere
        stack[layer, head, q] = 0.1 / 8
        stack[layer, head, q, target] = 0.45
    search = head_search(stack, query, target)
    assert (search.best.layer, search.best.head) == planted
    assert search.best.score == pytest.approx(0.9)
    assert search.chance == pytest.approx(2 / 10)
    assert search.best_over_chance == pytest.approx(4.5)
    assert search.best_depth == pytest.approx((layer + 1) / 3)
    assert len(search.ranking) == 12 and [h.score for h in search.ranking] == sorted(
        (h.score for h in search.ranking), reverse=True
    )
    # every score is an independent loop over the definition
    for h in search.ranking:
        expected = np.mean([sum(stack[h.layer, h.head, q, t] for t in target) for q in query])
        assert h.score == pytest.approx(expected, abs=1e-6)
    assert (search.paper_layer, search.paper_layers) == (5, 6) == (PAPER_LAYER, PAPER_LAYERS)


def test_figure_head_search_finds_the_figure_words():
    figure = PAPER_FIGURES[1]  # "its" -> "Law", "application"
    n = len(FIGURE4_TOKENS)
    stack = np.full((2, 2, n, n), 1.0 / n)
    stack[1, 0, 11] = 0.0
    stack[1, 0, 11, [2, 3, 12, 13, 14, 15]] = 1.0 / 6
    search = figure_head_search(figure, stack, FIGURE4_TOKENS)
    assert search.query_tokens == [11] and search.target_tokens == [2, 3, 12, 13, 14, 15]
    assert (search.best.layer, search.best.head) == (1, 0) and search.best.score == pytest.approx(1.0)
    assert search.chance == pytest.approx(6 / n)


def test_bad_head_search_input_gets_a_clear_message():
    with pytest.raises(ValueError, match="self-attention"):
        head_search(np.ones((2, 2, 3, 4)), [0], [1])
    with pytest.raises(ValueError, match="must lie in"):
        head_search(planted_stack(), [0], [10])
    with pytest.raises(ValueError, match="must not be empty"):
        head_search(planted_stack(), [], [1])


SHORT_SENTENCES = {  # the figures' words in sentences short enough for the tiny byte-level tokenizer
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}


def test_the_figures_run_through_the_model(tiny_model, tiny_tokenizer):
    """The tiny tokenizer never saw these words and falls back to bytes: the mapping must still hold."""
    figures = [dataclasses.replace(figure, sentence=SHORT_SENTENCES[figure.name]) for figure in PAPER_FIGURES]
    results = run_paper_figures(tiny_model, tiny_tokenizer, figures)
    assert [r.figure.name for r in results] == ["figure-3", "figures-4-5"]
    for result in results:
        tokens, search = result.source_tokens, result.search
        assert tokens[0] == "<2de>"  # English -> German
        assert result.encoder_attention.shape[2:] == (len(tokens), len(tokens))
        assert search.scores.shape == result.encoder_attention.shape[:2]
        assert words([tokens[i] for i in search.query_tokens])[0].key == result.figure.query
        target_text = " ".join(w.text for w in words([tokens[i] for i in search.target_tokens]))
        assert target_text.rstrip(".") == " ".join(result.figure.targets)
        assert 0 <= search.best.score <= 1 and search.chance == len(search.target_tokens) / len(tokens)
        expected = result.encoder_attention[:, :, search.query_tokens][..., search.target_tokens].sum(-1).mean(-1)
        np.testing.assert_allclose(search.scores, expected, atol=1e-6)


def test_a_sentence_cut_before_the_figure_words_gets_a_clear_message(tiny_model, tiny_tokenizer):
    """The paper's full sentence is over 100 bytes, so the tiny byte-level tokenizer cuts it."""
    with pytest.raises(ValueError, match="the cut lost a word of the figure"):
        run_paper_figures(tiny_model, tiny_tokenizer, PAPER_FIGURES[:1])


def test_a_poor_translation_of_a_long_sentence_is_called_poor_with_its_reasons():
    from model.text.language import LONG_SOURCE_SUBWORDS, repeated_phrase, translation_warnings

    assert repeated_phrase("aber seine Anwendung sollte, aber seine Anwendung sollte") == "aber seine anwendung"
    assert repeated_phrase("Zwei Hunde spielen im Schnee, zwei Katzen im Haus.") is None  # 2 words repeat: no loop
    short = ["<2de>", "▁Two", "▁dogs", "[EOS]"]
    assert translation_warnings(short, "Zwei Hunde.", finished=True) == []
    long = ["<2de>", *[f"▁w{i}" for i in range(LONG_SOURCE_SUBWORDS + 1)], "[EOS]"]
    reasons = translation_warnings(long, "Das ist das ist das ist gut", finished=False)
    assert len(reasons) == 3
    assert f"{LONG_SOURCE_SUBWORDS + 1} subword tokens" in reasons[0] and "rare in the training data" in reasons[0]
    assert "das ist das" in reasons[1] and "[EOS]" in reasons[2]
    assert len(translation_warnings(long[:-1][: LONG_SOURCE_SUBWORDS + 1], "Gut.", finished=True)) == 0


def test_the_paper_panel_says_when_its_german_is_poor(tiny_model, tiny_tokenizer):
    from ui.explain import paper as paper_panel

    figures = [dataclasses.replace(figure, sentence=SHORT_SENTENCES[figure.name]) for figure in PAPER_FIGURES]
    result = run_paper_figures(tiny_model, tiny_tokenizer, figures)[0]
    assert result.translation_warnings  # an untrained model loops or runs to the length limit
    text = paper_panel.verdict(result, 0, 0)
    shown = paper_panel.markdown_text(result.translation_warnings[0])  # as written, Markdown's brackets escaped
    assert "This translation is poor" in text and shown in text
    fine = dataclasses.replace(result, translation_warnings=[])
    assert "poor" not in paper_panel.verdict(fine, 0, 0)
