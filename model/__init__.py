"""A from-scratch Transformer ("Attention Is All You Need", 2017) that returns what a view needs.

Pure PyTorch: nothing here knows of Gradio or Plotly. By concern:
    core/         the Transformer of sections 3.1-3.5 alone (config, masks, positions, attention, layers)
    text/         the shared subword tokenizer (3.4), encoder inputs, limits, guard rails
    decoding/     greedy decoding and `translate` -> TranslationTrace, the trace, beam search (6.1), ablations
    training/     training (5), data, BLEU evaluation, precision, FLOPs, the run directory, the training film
    analysis/     analyses for the UI: read-outs and interventions, rollout, step changes, KV cache, figures
    checkpoints/  checkpoint directories, the model card, the Hub (`PretrainedTransformer`)
The one call a view needs is `model.decoding.greedy.translate(model, tokenizer, text, direction)`.
"""

from model.checkpoints.checkpoint import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from model.checkpoints.hub import PretrainedTransformer
from model.core.config import ConfigError, TransformerConfig
from model.decoding.greedy import greedy_decode
from model.text.tokenizer import DIRECTIONS, SubwordTokenizer
from model.decoding.trace import TranslationTrace
from model.core.transformer import Transformer

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "ConfigError",
    "DIRECTIONS",
    "PretrainedTransformer",
    "SubwordTokenizer",
    "Transformer",
    "TransformerConfig",
    "TranslationTrace",
    "greedy_decode",
    "load_checkpoint",
    "save_checkpoint",
]
