"""Validation during training (model.training.train): the label-smoothed loss over the validation examples and
greedy BLEU in both directions on each validation source.
"""

from __future__ import annotations

import random

import torch

from model.core.transformer import Transformer
from model.text.tokenizer import SubwordTokenizer
from model.training.data import Example, collate, token_batches
from model.training.evaluate import score, translate_batch
from model.training.loss import batch_loss


@torch.no_grad()
def validate(
    model: Transformer, tokenizer: SubwordTokenizer, examples: list[Example], val_sets: dict[str, list], args, device
) -> dict:
    """Validation loss (label-smoothed, like the training loss) and greedy BLEU in both directions.

    BLEU is computed on the first `--bleu-sentences` pairs of each validation source (`NAME bleu_de_en`)
    and `bleu_de_en` / `bleu_en_de` are the means over the sources, used for model selection.
    """
    model.eval()
    total, count = 0.0, 0
    for indices in token_batches(examples, args.max_tokens, random.Random(0)):
        src, tgt_in, labels = (t.to(device) for t in collate(examples, indices, model.config.pad_id))
        loss, tokens = batch_loss(model, src, tgt_in, labels, model.config.pad_id, args.label_smoothing, False)
        total, count = total + float(loss), count + tokens
    result = {"loss": total / max(count, 1)}
    for key in ("bleu_de_en", "bleu_en_de"):
        result[key] = 0.0
    for name, pairs in val_sets.items():
        subset = pairs[: args.bleu_sentences]
        for direction, (sources, references) in {
            "de-en": ([p[0] for p in subset], [p[1] for p in subset]),
            "en-de": ([p[1] for p in subset], [p[0] for p in subset]),
        }.items():
            key = f"bleu_{direction.replace('-', '_')}"
            bleu = score(translate_batch(model, tokenizer, sources, direction), references)["bleu"]
            if len(val_sets) > 1:
                result[f"{name} {key}"] = bleu
            result[key] += bleu / len(val_sets)
    model.train()
    return result
