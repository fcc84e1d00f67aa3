"""The greedy choice through the int8 screen (model/decoding/greedy_choice.py): its bound holds on full-size
matrices, its choice is the float32 projection's argmax (ties, banned ids, rows the int8 copy cannot tell apart),
a translation through it equals one through the whole projection, and a model whose weights change gets a new
screen. The Marian provenance tests (tests/model/checkpoints/test_marian_provenance.py) also run through it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.decoding import greedy_choice
from model.decoding.greedy import translate
from model.decoding.greedy_choice import SAFETY, ScreenedChoice, full_choice, int8_kernel, screen_for

pytestmark = pytest.mark.skipif(int8_kernel() is None, reason="this PyTorch has no weight-only int8 kernel")

FULL_SIZE = (58_101, 512)  # OPUS-MT's vocabulary x d_model (docs/opus-mt.md)
SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel.", "Hallo!"]


def hidden_states(d: int, count: int, seed: int) -> list[torch.Tensor]:
    """LayerNorm-like states (mean 0, unit variance) times gains from 0.2 to 20, and a few with one large entry."""
    generator = torch.Generator().manual_seed(seed)
    states = []
    for index in range(count):
        h = torch.randn(d, generator=generator)
        h = (h - h.mean()) / h.std() * (0.2 + 19.8 * index / max(1, count - 1))
        if index % 7 == 3:
            h[index % d] = 60.0
        states.append(h)
    return states


@pytest.fixture(scope="module")
def full_size() -> tuple[torch.Tensor, torch.Tensor]:
    """A full-size matrix with rows of very different scales (and a few spiky rows), and a bias."""
    generator = torch.Generator().manual_seed(0)
    vocab, d = FULL_SIZE
    weight = (
        torch.randn(vocab, d, generator=generator)
        * torch.logspace(-3, 0, vocab)[torch.randperm(vocab, generator=generator)][:, None]
    )
    weight[::997, 5] = 3.0  # one large entry: a coarse int8 scale for the rest of the row
    bias = torch.randn(vocab, generator=generator) * 0.5
    return weight, bias


def test_the_bound_holds_on_a_full_size_matrix(full_size):
    weight, bias = full_size
    screen = ScreenedChoice(weight, bias)
    worst = 0.0
    for h in hidden_states(weight.size(1), 40, seed=1):
        exact = (h.double() @ weight.double().T + bias.double()).float()  # (V,) float64, then float32
        logits, bound = screen.screen(h)
        assert logits.shape == bound.shape == exact.shape
        # the derived bound (without the safety factor) already holds
        worst = max(worst, float(((exact - logits).abs() / (bound / SAFETY)).max()))
    assert worst <= 1.0
    assert worst > 0.01  # the bound is not vacuous: some error comes near it


def test_the_choice_is_the_float32_argmax_even_where_the_int8_copy_cannot_tell_rows_apart(full_size):
    weight, bias = full_size
    weight = weight.clone()
    twins = torch.arange(100, 5000, 97)
    weight[twins + 1] = weight[twins] + 1e-4 * torch.randn(len(twins), weight.size(1))  # below the int8 step
    weight[7000] = weight[7001]  # an exact tie: the first id wins, as argmax's
    screen = ScreenedChoice(weight, bias)
    banned = torch.tensor([int(twins[0])])
    disagreements = 0
    for index, h in enumerate(hidden_states(weight.size(1), 60, seed=2)):
        if index % 3 == 0:  # aim at a pair of twins: both near the top, only float32 separates them
            h = weight[twins[index % len(twins)]].clone() * 40
        if index % 5 == 0:
            h = weight[7000].clone() * 40
        expected = int(full_choice(F.linear(h[None], weight) + bias, banned)[0])
        chosen = screen.choose(h, banned)
        if chosen is None:  # a tie within float32 rounding: the caller reads the whole projection
            continue
        disagreements += chosen != expected
    assert disagreements == 0
    h = hidden_states(weight.size(1), 3, seed=3)[-1]
    logits = F.linear(h[None], weight) + bias  # (1, V)
    winner = logits.argmax(dim=-1)  # (1,): banned, the next best must be chosen
    expected = int(full_choice(logits, winner)[0])
    assert expected != int(winner[0]) and screen.choose(h, winner) == expected


def test_a_translation_through_the_screen_equals_one_through_the_whole_projection(
    tiny_model, tiny_tokenizer, monkeypatch
):
    plain = [translate(tiny_model, tiny_tokenizer, text, "de-en").output_ids for text in SENTENCES]
    monkeypatch.setattr(greedy_choice, "SCREEN_MIN_WEIGHTS", 0)  # the tiny model's matrix screened too
    used = []
    choose = ScreenedChoice.choose
    monkeypatch.setattr(ScreenedChoice, "choose", lambda self, h, banned: used.append(1) or choose(self, h, banned))
    screened = [translate(tiny_model, tiny_tokenizer, text, "de-en").output_ids for text in SENTENCES]
    assert screened == plain
    assert len(used) >= sum(len(ids) for ids in plain) - len(plain)  # every step but the last went through it


def test_a_model_whose_weights_change_gets_a_new_screen(tiny_model, monkeypatch):
    monkeypatch.setattr(greedy_choice, "SCREEN_MIN_WEIGHTS", 0)
    first = screen_for(tiny_model)
    assert screen_for(tiny_model) is first  # made once
    with torch.no_grad():
        tiny_model.embedding.weight.mul_(1.0)  # an in-place change, as an optimizer step makes
    second = screen_for(tiny_model)
    assert second is not first
    np.testing.assert_array_equal(second.weight.numpy(), tiny_model.embedding.weight.detach().numpy())


def test_the_screen_is_left_out_where_it_does_not_pay(tiny_model):
    assert tiny_model.embedding.weight.numel() < greedy_choice.SCREEN_MIN_WEIGHTS
    assert screen_for(tiny_model) is None
