"""Training (section 5): the training command (`python -m model.training.train`), data and batches,
evaluation (BLEU), precision, FLOPs/MFU, the run directory and the training film.
"""
