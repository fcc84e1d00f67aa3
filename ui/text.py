"""Page text of Attention Explorer: the introduction, each tab's explanation (with the paper's
sections of "Attention Is All You Need") and the example sentences. Plain strings, no Gradio.
"""

from pathlib import Path

from model.text import limits
from serving.translation import DIRECTIONS as DIRECTION_LABELS  # noqa: F401  (the page reads them here)

REPOSITORY = Path(__file__).resolve().parent.parent  # a checkpoint inside it is named relative to it on the page

PAPER = "https://arxiv.org/abs/1706.03762"


def paper(section: str, name: str) -> str:
    """A Markdown link to a section of "Attention Is All You Need" (arXiv 1706.03762)."""
    return f"[Paper: section {section}, {name}]({PAPER})"


def public_path(path: str | Path) -> str:
    """A server's folder as the page may name it: relative to the repository where it lies inside it
    ("checkpoints/de-en-small"), else its last part alone; never the server's absolute path."""
    path = Path(path).resolve()
    return str(path.relative_to(REPOSITORY)) if path.is_relative_to(REPOSITORY) else path.name


EXAMPLES = [  # each one read and checked with the shipped checkpoint; tests/ui/test_examples.py pins its translation
    ["Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"],
    ["Zwei Hunde spielen im Schnee.", "de-en"],
    ["Eine Frau in einem roten Kleid singt auf einer Bühne.", "de-en"],
    ["Wo wohnst du?", "de-en"],
    ["Kannst du mir helfen?", "de-en"],
    ["A boy jumps into the water.", "en-de"],
    ["Two men are playing soccer in the park.", "en-de"],
    ["The children are playing in the garden.", "en-de"],
    ["This is my house.", "en-de"],
    ["I like music.", "en-de"],
    ["Wo ist der Bahnhof?", "de-en"],
    ["The cat is sleeping on the sofa.", "en-de"],
    ["My father works in a bank.", "en-de"],
    ["Ich habe heute keine Zeit.", "de-en"],
]

INTRO = (
    '**Attention Explorer**<span class="intro-tail"> · the Transformer of "Attention Is All You Need" '
    "translating German ↔ English</span>"
)  # a phone shows the name only (style.css)

ABOUT_APP = f"""
Type a sentence, translate it, then step through greedy decoding and open the model: the next-token
probabilities, every attention head, the positional encodings and the masks (Vaswani et al., 2017).
The model is **post-LN, like the paper**: every sub-layer is `LayerNorm(x + Sublayer(x))` (section 3.1).

Limits: at most **{limits.MAX_INPUT_CHARS:,} characters** of input; the source is cut to
**{limits.MAX_SOURCE_TOKENS} subword tokens** and the output stops after **{limits.MAX_TARGET_TOKENS} tokens**.
Enter in the sentence box translates; Shift+Enter starts a new line.
"""


def example_label(text: str, direction: str) -> str:
    """An example as the examples menu lists it: its source language, then the sentence."""
    return f"{direction[:2].upper()} · {text}"


ABOUT_NEXT = """
**Greedy decoding.** The decoder is auto-regressive (section 3): at step *t* it reads the tokens
chosen so far and outputs a probability for every token of the shared vocabulary (section 3.4).
Greedy decoding takes the most probable one (highlighted); the paper used beam search of size 4
(section 6.1). The entropy (in bits) says how unsure the model is: 0 bits = certain.
""" + paper("3.4", "Embeddings and Softmax")

ABOUT_ATTENTION = {
    "encoder": "**Encoder self-attention** (sections 3.2.2 and 3.2.3): every source token (row, query) "
    "attends to every source token (column, key). It runs once for the sentence, so it does "
    "not change as you step. " + paper("3.2.3", "Applications of Attention in our Model"),
    "decoder_self": "**Masked decoder self-attention** (section 3.2.3): each target position attends only to "
    "itself and earlier positions, so the triangle grows by one row and column per step. "
    "The highlighted row is the query being decoded now. " + paper("3.2.3", "Applications of Attention in our Model"),
    "cross": "**Cross-attention / encoder-decoder attention** (section 3.2.3): queries come from the "
    "decoder, keys and values from the encoder's output, so each target row shows which source "
    "tokens the decoder reads. Rows appear as you step; the highlighted row is being decoded now. "
    + paper("3.2.3", "Applications of Attention in our Model"),
}

ABOUT_HEADS = """
Each cell is a softmax weight, `softmax(QKᵀ/√d_k)` (scaled dot-product attention, section 3.2.1):
rows are queries (top to bottom), columns are keys (left to right); each row sums to 1.
*All heads* shows every head of the chosen layer side by side; *mean of heads* averages them. Multi-head attention (section 3.2.2) runs the heads in parallel on d_k-sized slices.
""" + paper("3.2.2", "Multi-Head Attention")

ABOUT_PIPELINE = """
**Inside one head** (section 3.2.1): the raw scores `QKᵀ/√d_k`, the same scores with the mask applied
(masked keys get −∞, i.e. the dtype's minimum), and the softmax that turns each row into weights.
""" + paper("3.2.1", "Scaled Dot-Product Attention")

ABOUT_POSITIONS = """
**Positional encoding** (section 3.5): attention itself ignores word order, so a fixed sinusoid,
`PE(pos, 2i) = sin(pos / 10000^(2i/d_model))`, `PE(pos, 2i+1) = cos(…)`, is added to every embedding.
Low dimensions oscillate fast, high dimensions slowly; rows 0..S−1 are added to this source sentence.
""" + paper("3.5", "Positional Encoding")

ABOUT_POSITIONS_HALVES = """
**Positional encoding** (section 3.5): attention itself ignores word order, so a fixed table of sinusoids
is added to every embedding. This model lays it out in halves (Marian's layout): the first d_model/2
dimensions are `PE(pos, i) = sin(pos / 10000^(2i/d_model))`, the rest `PE(pos, d_model/2 + i) = cos(…)`:
the paper's sinusoids, which its code interleaves (even dimensions sin, odd cos). Within each half, low
dimensions oscillate fast, high dimensions slowly; rows 0..S−1 are added to this source sentence.
""" + paper("3.5", "Positional Encoding")


def about_positions(layout: str = "interleaved") -> str:
    """The Positional encoding tab's text for a table in `layout` (model/core/positional.py)."""
    return ABOUT_POSITIONS_HALVES if layout == "halves" else ABOUT_POSITIONS


def about_masks(pad_token: str = "[PAD]") -> str:
    """The Masks tab's text, naming the padding token as the model's tokenizer spells it."""
    return f"""
**Masks** (section 3.2.3; True = may attend). *Padding*: a batch is padded to its longest sentence and
no query may attend a `{pad_token}` key; the typed sentence is shown batched with a longer one.
*Causal (look-ahead)*: decoder position *i* sees positions ≤ *i* only. *Decoder mask*: causal AND padding.
*Cross-attention mask*: every target query may attend every real source token.
""" + paper("3.2.3", "Applications of Attention in our Model")


ABOUT_MODEL = """
Post-LN like the paper: each encoder and decoder layer applies `LayerNorm(x + Sublayer(x))` after every
attention and feed-forward sub-layer (section 3.1); embeddings are scaled by √d_model and share one
German+English vocabulary (section 3.4); dropout as in section 5.4; BLEU as in section 6.1 (sacreBLEU on
detokenized, cased output).
""" + paper("3.1", "Encoder and Decoder Stacks")

ABOUT_PUBLISHED_MODEL = """
Post-LN like the paper: each encoder and decoder layer applies `LayerNorm(x + Sublayer(x))` after every
attention and feed-forward sub-layer (section 3.1); embeddings are scaled by √d_model and one embedding is shared
by the encoder, the decoder and the output (section 3.4). Trained elsewhere and loaded into this project's core:
the table names where it departs from the paper.
""" + paper("3.1", "Encoder and Decoder Stacks")

# --------------------------------------------------------------------------- the Explain tab
# The Explain tab's own text; each panel's text is in its module (ui/explain/).
ABOUT_EXPLAIN = (
    "Each panel below either changes the model on purpose and re-runs it on *your* sentence (press its "
    "button) or reads more out of the translation you made. " + paper("3", "Model Architecture")
)


# --------------------------------------------------------------------------- the Compare tab
# the pair of the 2017 Google blog post that introduced the Transformer: "it" is the animal or the street
BLOG_PAIR = (
    "The animal didn't cross the street because it was too tired.",
    "The animal didn't cross the street because it was too wide.",
    "en-de",
)
BLOG_REFERENTS = ("animal", "street")  # what "it" refers to in the blog pair: the Compare tab says where it looks

ABOUT_COMPARE = """
**Two sentences side by side.** The sentence above is the first; type a second one of the same direction
and press *Compare*. Both are drawn with the same attention kind, layer and head. Pick a source token
present in both (such as *it*): its lines are kept, every head is ranked by how differently the token
attends in the two sentences (the total variation between its two attention rows, keys matched by token:
0 = the same, 1 = nothing shared), and the candidates show what the decoder chose at the step that
translates it. A comparison opens on the head that tells the two apart most, at that step (both figures follow
the player bar's step); the sentence above the figures says, from the numbers, whether any head links the token
to a word. Choose a ranked head to draw it for both sentences.
""" + paper("3.2.2", "Multi-Head Attention")
