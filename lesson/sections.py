"""The lesson's views and the section of "Attention Is All You Need" (Vaswani et al., 2017) beside each.

Plain text: the page names the paper by its title and sections, never by a link (a lesson's page requests and
names nothing outside its folder).
"""

from __future__ import annotations

from model.decoding.trace import ATTENTION_KINDS

PAPER = 'Vaswani et al. (2017), "Attention Is All You Need"'

VIEWS = [  # (id, tab label, section, what the aside says)
    (
        "attention",
        "Attention",
        "3.2 Attention",
        "Each query row is a softmax over the keys: softmax(QKᵀ/√d_k) of one head (3.2.1). A layer runs h heads "
        'side by side on their own projections (3.2.2, "all heads"); "mean" averages them. The model uses '
        "attention three ways (3.2.3): the encoder attends over the source, the decoder over its own earlier "
        "tokens (masked), and each decoder position over the encoder's output (cross-attention).",
    ),
    (
        "next",
        "Next token",
        "3.4 Embeddings and Softmax",
        "At each step the decoder's output, projected by the shared embedding matrix and a softmax, gives a "
        "probability for every subword; greedy decoding takes the most probable one (highlighted). The entropy "
        "says how unsure the model is: 0 bits = certain.",
    ),
    (
        "positions",
        "Positional encoding",
        "3.5 Positional Encoding",
        "Attention alone does not know word order, so each position adds sines and cosines of geometrically "
        "spaced wavelengths to its embedding; nearby positions get similar encodings.",
    ),
    (
        "masks",
        "Masks",
        "3.2.3 Applications of Attention",
        "Padding is masked so no query reads a [PAD] key, and the decoder's self-attention is masked to the left "
        "(look-ahead mask) so step t sees only the tokens before it. Masked scores are set to −∞ before the softmax.",
    ),
]

SHORT_LABELS = {
    "encoder": "Encoder self",
    "decoder_self": "Decoder self (masked)",
    "cross": "Cross (encoder → decoder)",
}
KIND_SECTIONS = {  # the kind of attention -> where section 3.2.3 describes it
    "encoder": "3.2.3: encoder self-attention, every source position attends to every source position",
    "decoder_self": "3.2.3: masked decoder self-attention, each position attends to itself and earlier ones",
    "cross": "3.2.3: encoder-decoder attention, decoder queries read the encoder's keys and values",
}


def views() -> list[dict]:
    """The views as the page lists them."""
    return [dict(id=view, label=label, section=section, text=text) for view, label, section, text in VIEWS]


def kinds() -> list[dict]:
    """The attention kinds as the page offers them (registry order), each with its section."""
    return [
        dict(id=kind.name, label=kind.label, short=SHORT_LABELS[kind.name], section=KIND_SECTIONS[kind.name])
        for kind in ATTENTION_KINDS.values()
    ]
