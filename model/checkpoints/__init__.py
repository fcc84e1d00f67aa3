"""Checkpoints and the Hub: what a checkpoint directory holds (files), its safetensors weights (weights),
loading and saving it (checkpoint), the Transformer as a Hub model (hub: from_pretrained, save_pretrained,
push_to_hub), the model card, the shipped checkpoint's path.
"""
