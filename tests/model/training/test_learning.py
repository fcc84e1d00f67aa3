"""Learning smoke test: the whole model trains (section 5) on a toy task on the CPU in seconds.

A tiny Transformer learns to copy short random id sequences of different lengths (padded batches,
teacher forcing, Adam, cross-entropy that ignores [PAD]); the loss falls and greedy decoding then
reproduces unseen sequences with >= 95% token accuracy. If any part of the model were broken
(masks, attention, positional encoding, the tied projection, gradients), it could not learn this.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from model.core.config import TransformerConfig
from model.decoding.greedy import greedy_decode
from model.core.transformer import Transformer

CONFIG = TransformerConfig(
    vocab_size=16,
    d_model=32,
    n_heads=4,
    n_encoder_layers=1,
    n_decoder_layers=1,
    d_ff=64,
    dropout=0.0,
    attention_dropout=0.0,
    max_positions=16,
)
FIRST_WORD = 4  # ids 0..3 are [PAD] [BOS] [EOS] [UNK]
MIN_LENGTH, MAX_LENGTH = 3, 6
STEPS, BATCH = 300, 64


def copy_batch(size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random sequences of MIN..MAX words, + [EOS], right-padded. -> src (B, S), tgt (B, S + 1) with [BOS]."""
    lengths = torch.randint(MIN_LENGTH, MAX_LENGTH + 1, (size,), generator=generator)
    words = torch.randint(FIRST_WORD, CONFIG.vocab_size, (size, MAX_LENGTH), generator=generator)
    positions = torch.arange(MAX_LENGTH + 1)[None, :]  # (1, S)
    src = torch.full((size, MAX_LENGTH + 1), CONFIG.pad_id)
    src[:, :MAX_LENGTH] = words
    src[positions.expand(size, -1) == lengths[:, None]] = CONFIG.eos_id
    src[positions > lengths[:, None]] = CONFIG.pad_id
    tgt = torch.cat([torch.full((size, 1), CONFIG.bos_id), src], dim=1)  # (B, S + 1)
    return src, tgt


@pytest.fixture
def one_thread():
    """Tiny matrices gain nothing from threads; on a shared, busy CPU two threads spin-wait on each
    other and the 4 s test takes over a minute. Restore the setting afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_tiny_model_learns_to_copy(one_thread):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = Transformer(CONFIG)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98), eps=1e-9)
    losses = []
    model.train()
    for _ in range(STEPS):
        src, tgt = copy_batch(BATCH, generator)
        logits = model(src, tgt[:, :-1])  # (B, T, V): teacher forcing, inputs shifted right
        loss = F.cross_entropy(
            logits.reshape(-1, CONFIG.vocab_size), tgt[:, 1:].reshape(-1), ignore_index=CONFIG.pad_id
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < 0.2 * first, f"loss fell only from {first:.3f} to {last:.3f}"

    model.eval()
    src, _ = copy_batch(200, torch.Generator().manual_seed(123))  # unseen sequences
    output = greedy_decode(model, src, max_new_tokens=MAX_LENGTH + 1)  # (B, <= S)
    expected = src[:, : output.size(1)]
    real = expected != CONFIG.pad_id  # words and [EOS]
    accuracy = (output == expected)[real].float().mean().item()
    assert accuracy >= 0.95, f"greedy token accuracy {accuracy:.3f}"
