"""Analyses of a translation for the UI, from the kept trace or a few extra passes: read-outs and
interventions of the Explain tab (readouts.py), attention rollout, step changes, the KV cache while stepping,
the paper's Figures 3-5 and heads forming over the training film.
"""
