"""The Transformer of sections 3.1-3.5 alone, read top to bottom like the paper: config, masks and
positional encoding (3.5), attention (3.2), encoder and decoder layers (3.1, 3.3), the Transformer (Figure 1).
"""
