"""Checkpoints and the Hub: checkpoint directories (safetensors, config, tokenizer, metrics), the model
card, the shipped checkpoint's path.
"""
