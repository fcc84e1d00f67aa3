"""Page text of Attention Explorer: the introduction, each tab's explanation (with the paper's
sections of "Attention Is All You Need") and the example sentences. Plain strings, no Gradio.
"""

from model.text import limits

PAPER = "https://arxiv.org/abs/1706.03762"


def paper(section: str, name: str) -> str:
    """A Markdown link to a section of "Attention Is All You Need" (arXiv 1706.03762)."""
    return f"[Paper: section {section}, {name}]({PAPER})"


API_DESCRIPTION = (
    "Translate German ↔ English with the Transformer of 'Attention Is All You Need' (greedy "
    "decoding). text: the sentence (at most 5,000 characters); direction: 'de-en' or 'en-de' (or "
    "'German → English' / 'English → German'). Returns the translation and a JSON file with the "
    "full trace: tokens, every attention weight, next-token candidates per step."
)

DIRECTION_LABELS = {"de-en": "German → English", "en-de": "English → German"}

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

ABOUT_MASKS = """
**Masks** (section 3.2.3; True = may attend). *Padding*: a batch is padded to its longest sentence and
no query may attend a `[PAD]` key; the typed sentence is shown batched with a longer one.
*Causal (look-ahead)*: decoder position *i* sees positions ≤ *i* only. *Decoder mask*: causal AND padding.
*Cross-attention mask*: every target query may attend every real source token.
""" + paper("3.2.3", "Applications of Attention in our Model")

ABOUT_MODEL = """
Post-LN like the paper: each encoder and decoder layer applies `LayerNorm(x + Sublayer(x))` after every
attention and feed-forward sub-layer (section 3.1); embeddings are scaled by √d_model and share one
German+English vocabulary (section 3.4); dropout as in section 5.4; BLEU as in section 6.1 (sacreBLEU on
detokenized, cased output).
""" + paper("3.1", "Encoder and Decoder Stacks")

# --------------------------------------------------------------------------- the Explain tab
# Each panel opens with one sentence (its LEAD: what it shows and how to read it); the rest of its text is
# folded under its figure. Plain Markdown without bold: the panels' texts are read as they are written.
ABOUT_EXPLAIN = (
    "Each panel below either changes the model on purpose and re-runs it on *your* sentence (press its "
    "button) or reads more out of the translation you made. " + paper("3", "Model Architecture")
)

EXPLAIN_ABLATION_LEAD = (
    "Switch heads off: tick heads and re-decode your sentence without them; each bar is how much "
    "the probability of an original token fell (red) or rose (blue)."
)
EXPLAIN_ABLATION = """
*Head ablation* (section 3.2.2). A head's output (its slice of `Concat(head₁, …, head_h)`, before `W^O`) is
set to zero, as in Michel et al. (2019). The sentence is decoded again greedily, and the *original* output is
teacher-forced through the ablated model, so each step compares the probability of the same token with and
without the heads.
"""

EXPLAIN_BRANCH_LEAD = (
    "Branch: force another candidate at the current step and let greedy decoding go on; the new "
    "output is shown beside the original, the forced and changed tokens marked."
)
EXPLAIN_BRANCH = """
The candidate is forced at the step of the step slider above (the steps before it keep the original tokens)
and greedy decoding continues from there. Greedy decoding never revisits a choice; this shows what one
different choice does to the rest.
"""

EXPLAIN_LENS_LEAD = (
    "Logit lens: what each decoder layer would predict at this step, one row per layer; the last "
    "row is the model's real prediction and the outlined cell is the token it chose."
)
EXPLAIN_LENS = """
Each decoder layer's output at the current step is read through the final projection (the shared embedding
matrix, section 3.4) and a softmax. The model is post-LN (section 3.1): every layer ends in
`LayerNorm(x + Sublayer(x))`, so each layer output is already normalised like the last one and no extra
normalisation is applied.
"""

EXPLAIN_BEAM_LEAD = (
    "Beam vs greedy: runs the paper's beam search (beam 4) on your sentence and lists its hypotheses "
    "under the greedy output; the marked token is where each first differs."
)
EXPLAIN_BEAM = """
Section 6.1: "beam search with a beam size of 4 and length penalty α = 0.6". Hypotheses are ranked by
`log P(Y) / lp(Y)` with `lp(Y) = ((5 + |Y|) / 6)^α` (|Y| counts [EOS]); greedy is scored the same way.
"""

EXPLAIN_ALIGNMENT_LEAD = (
    "Word alignment: each output token is linked to the source token its cross-attention weighs "
    "most; darker lines are stronger links, listed as Pharaoh pairs below."
)
EXPLAIN_ALIGNMENT = """
*Word alignment from cross-attention* (section 3.2.3). For each output token, the encoder-decoder attention of
the step that *chose* it is averaged over all heads and the chosen layers, and the source token with the most
weight is linked to it. Weight on the language tag and `[EOS]` (a frequent "nowhere" sink) does not count,
and the output `[EOS]` gets no link.

*Pharaoh format* `i-j`: *i* = source position, *j* = target position, both 0-based and counting real tokens
only: the language tag `<2xx>` and `[EOS]` are not counted, so the first source word is 0. *Subwords* counts
tokens as shown; *words* counts whitespace-separated words (a subword without `▁` joins the word before it),
the convention of word-level aligners such as fast_align.
"""

EXPLAIN_DIAGNOSTICS_LEAD = (
    "Head diagnostics: one cell per layer (row) and head (column) over your sentence: how "
    "spread out its attention is, how diagonal, and how much lands on special tokens."
)
EXPLAIN_DIAGNOSTICS = """
Per layer and head (section 3.2.2), averaged over the sentence's queries: the *entropy* of the attention in bits
(low = focused), how *diagonal* it is (weight within one position of the query's own position; for
cross-attention, of the proportional source position), and how much goes to *special tokens* (`[EOS]`,
`[BOS]`, the language tag) and to *tokens ending in punctuation* (this tokenizer glues a final mark to its
word, as in `▁Schnee.`, so the word counts too): heads often park attention there when they have nothing to
do. Choose a head to open it in the Attention tab.
"""

EXPLAIN_POSITIONS_LEAD = (
    "Without positions: translates your sentence again with the positional encodings removed; "
    "the bars show how each original token's probability changes."
)
EXPLAIN_POSITIONS = """
*Without positional encodings* (section 3.5). Attention itself ignores order: without the sinusoids added to
the embeddings, the encoder sees a bag of tokens (the same token gets the same attention row wherever it
stands) and the decoder does not know how far it has got. The sentence is decoded again with the encodings
removed from encoder and decoder, and the original output is teacher-forced to compare per-step
probabilities; below the bars, one encoder head with and without them.
"""

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
