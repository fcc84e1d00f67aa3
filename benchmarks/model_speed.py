"""Model part: translate + full trace vs plain greedy (KV cache) vs greedy without the cache, on the CPU.

For each direction and source length N (subword tokens, language tag and [EOS] not counted) the
three variants decode the same sentence to the same tokens; they are timed round-robin.

- traced:   `model.decoding.greedy.translate` (tokenize, encode, KV-cached greedy, one teacher-forced traced pass,
            numpy trace).
- plain:    tokenize, encode, `greedy_steps(use_cache=True)`: what a translator without views costs.
- no_cache: tokenize, encode, `greedy_steps(use_cache=False)`: the prefix recomputed at every step.
"""

from __future__ import annotations

import torch

from model.decoding.greedy import default_max_new_tokens, greedy_steps, prepare_source, translate
from model.core.masks import padding_mask

from .common import SOURCE_LANGUAGE, ratio, summarize, text_of_tokens, time_interleaved

LENGTHS = (5, 10, 20, 40, 80)
DIRECTIONS = ("de-en", "en-de")


@torch.no_grad()
def plain_greedy(model, tokenizer, text: str, direction: str, use_cache: bool = True) -> list[int]:
    """Encode + greedy decoding with the same budget as `translate`, no trace. -> output ids."""
    source_ids, _ = prepare_source(tokenizer, text, direction)
    src = torch.tensor([source_ids])  # (1, S)
    src_mask = padding_mask(src, model.config.pad_id)  # (1, 1, 1, S)
    memory = model.encode(src, src_mask).memory
    steps = greedy_steps(model, memory, src_mask, default_max_new_tokens(len(source_ids)), use_cache=use_cache)
    return [int(step.tokens[0]) for step in steps]


def measure(checkpoint, repeats: int, lengths=LENGTHS, directions=DIRECTIONS) -> dict:
    """-> {"rows": [...]} with median/p95 (ms) of each variant and its ratio to the traced run."""
    model, tokenizer = checkpoint.model.eval(), checkpoint.tokenizer
    rows = []
    for direction in directions:
        for n_tokens in lengths:
            text = text_of_tokens(tokenizer, SOURCE_LANGUAGE[direction], n_tokens)
            trace = translate(model, tokenizer, text, direction)
            plain_ids = plain_greedy(model, tokenizer, text, direction)
            wall, cpu = time_interleaved(
                {
                    "traced": lambda: translate(model, tokenizer, text, direction),
                    "plain": lambda: plain_greedy(model, tokenizer, text, direction),
                    "no_cache": lambda: plain_greedy(model, tokenizer, text, direction, use_cache=False),
                },
                repeats,
            )
            stats = {name: summarize(values) for name, values in wall.items()}
            traced = stats["traced"]["median"]
            rows.append(
                {
                    "direction": direction,
                    "source_tokens": n_tokens,
                    "output_steps": trace.num_steps,
                    "same_output": plain_ids == trace.output_ids,
                    "traced_ms": stats["traced"],
                    "plain_ms": stats["plain"],
                    "no_cache_ms": stats["no_cache"],
                    "traced_cpu_ms": summarize(cpu["traced"]),  # process CPU time, steadier under load
                    "plain_cpu_ms": summarize(cpu["plain"]),
                    "traced_ms_per_step": round(traced / trace.num_steps, 3),
                    "plain_ratio": ratio(stats["plain"]["median"], traced),  # plain / traced
                    "no_cache_ratio": ratio(stats["no_cache"]["median"], traced),  # no cache / traced
                    "trace_overhead": ratio(traced, stats["plain"]["median"]),  # traced / plain (target <= 1.3)
                }
            )
    return {"rows": rows}
