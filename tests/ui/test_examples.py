"""The page's example sentences, translated by the shipped checkpoint.

Every example a visitor can click was read and checked by a person, and its translation is pinned
here: a new checkpoint that breaks an example fails this test, and the examples get chosen again.
The translation is the one the page shows: greedy decoding through `model.decoding.greedy.translate`.
"""

from __future__ import annotations

import pytest

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.decoding.greedy import translate
from ui.text import EXAMPLES

PINNED = {
    ("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"): "A man rides a bicycle down the street.",
    ("Zwei Hunde spielen im Schnee.", "de-en"): "Two dogs play in the snow.",
    ("Eine Frau in einem roten Kleid singt auf einer Bühne.", "de-en"): "A woman in a red dress is singing on a stage.",
    ("Wo wohnst du?", "de-en"): "Where do you live?",
    ("Kannst du mir helfen?", "de-en"): "Can you help me?",
    ("A boy jumps into the water.", "en-de"): "Ein Junge springt ins Wasser.",
    ("Two men are playing soccer in the park.", "en-de"): "Zwei Männer spielen Fußball im Park.",
    ("The children are playing in the garden.", "en-de"): "Die Kinder spielen im Garten.",
    ("This is my house.", "en-de"): "Das ist mein Haus.",
    ("I like music.", "en-de"): "Ich mag Musik.",
    ("Wo ist der Bahnhof?", "de-en"): "Where's the station?",
    ("The cat is sleeping on the sofa.", "en-de"): "Die Katze schläft auf dem Sofa.",
    ("My father works in a bank.", "en-de"): "Mein Vater arbeitet in einer Bank.",
    ("Ich habe heute keine Zeit.", "de-en"): "I don't have time today.",
}


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(DEFAULT_CHECKPOINT)


def test_every_example_is_pinned_and_both_directions_are_shown():
    assert {(text, direction) for text, direction in EXAMPLES} == set(PINNED)
    assert {direction for _, direction in EXAMPLES} == {"de-en", "en-de"}


@pytest.mark.parametrize("text, direction", [tuple(example) for example in EXAMPLES])
def test_the_shipped_model_translates_the_example_as_read_and_checked(shipped, text, direction):
    trace = translate(shipped.model, shipped.tokenizer, text, direction)
    assert trace.translation == PINNED[text, direction]
    assert trace.output_tokens[-1] == "[EOS]"  # it finished the sentence, not the length budget
