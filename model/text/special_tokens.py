"""The spellings of special tokens, whichever tokenizer wrote them.

A trace carries token strings only; a view or a read-out that must tell a special token ("[EOS]", "<2en>",
"</s>", "<pad>") from a subword asks this set: the own tokenizer's (model/text/tokenizer.py) and an OPUS-MT
checkpoint's (model/text/marian_tokenizer.py). Neither vocabulary spells a subword like another's special token.
"""

from __future__ import annotations

from model.text import marian_tokenizer, tokenizer

SPECIAL_TOKENS = frozenset(tokenizer.SPECIAL_TOKENS) | marian_tokenizer.SPECIAL_TOKENS

# The end-of-sentence token as each of the app's models spells it, by the model a trace names
# (TranslationTrace.model: "own" or "opus-mt", model/checkpoints/catalogue.py).
END_TOKENS = {"own": tokenizer.EOS, "opus-mt": marian_tokenizer.EOS}
