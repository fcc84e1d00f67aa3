"""A from-scratch Transformer ("Attention Is All You Need", 2017) that returns what a view needs.

Pure PyTorch: nothing here knows of Gradio or Plotly. The one call a view needs is
`model.decoding.translate(model, tokenizer, text, direction) -> TranslationTrace`.
(It is not re-exported here: `model.translate` is the command-line module.)
"""

from .checkpoint import Checkpoint, CheckpointError, load_checkpoint, save_checkpoint
from .config import ConfigError, TransformerConfig
from .decoding import greedy_decode
from .tokenizer import DIRECTIONS, SubwordTokenizer
from .trace import TranslationTrace
from .transformer import Transformer

__all__ = [
    "Checkpoint", "CheckpointError", "ConfigError", "DIRECTIONS", "SubwordTokenizer", "Transformer",
    "TransformerConfig", "TranslationTrace", "greedy_decode", "load_checkpoint", "save_checkpoint",
]
