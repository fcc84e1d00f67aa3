"""Token labels for every view (the inputs and outputs of section 3.1's encoder and decoder).

Tokens are the tokenizer's own spellings ("▁Mann", "[EOS]", "<2en>", "<0xF0>"). Plotly renders a
small HTML subset in tick labels, hover text and titles, so a token typed as
``<img src=x onerror=alert(1)>`` must be escaped to be shown as text; Plotly turns the entities
&lt; &gt; &amp; back into characters when drawing. The SentencePiece word marker "▁" (a word
start) is kept as is. Which tokens are special ([EOS], the language tags) is the tokenizer's to
say, so views that mark them take the set from the caller.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence

EMPTY_TOKEN = "∅"  # shown for an empty token, which would otherwise be an invisible tick


def escape_text(text: str) -> str:
    """Plain text -> Plotly-safe label (only & < > matter; quotes are not markup in Plotly)."""
    return html.escape(text, quote=False)


def display_tokens(tokens: Sequence[str], max_chars: int | None = None) -> list[str]:
    """Escaped display labels, one per position (duplicates stay separate positions).

    Args:
        tokens: the tokens as the tokenizer spells them.
        max_chars: cut longer tokens to this many characters, ending in "…" (before escaping,
            so an entity is never cut in half). None: keep them whole.

    Returns:
        One label per token: HTML-escaped, "▁" kept, an empty token shown as "∅".

    Raises:
        ValueError: ``tokens`` is a plain string or holds something other than strings.
    """
    if isinstance(tokens, (str, bytes)):
        raise ValueError("tokens must be a list of strings, not a single string")
    labels = []
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise ValueError(f"token {index} is {type(token).__name__}, expected str")
        if max_chars is not None and len(token) > max_chars:
            token = token[: max(max_chars - 1, 1)] + "…"
        labels.append(escape_text(token) if token else EMPTY_TOKEN)
    return labels


def shown_length(label: str) -> int:
    """Characters a display label takes when drawn: each entity (&lt; &gt; &amp;) is one."""
    return len(html.unescape(label))


def token_chips(
    tokens: Sequence[str],
    classes: dict[int, str] | None = None,
    titles: Sequence[str] | None = None,
    special_tokens: Collection[str] = (),
) -> str:
    """Tokens as escaped HTML chips (<span class="tok ...">) for the page; typed HTML is shown, never run.

    classes: extra CSS class per position (e.g. {3: "chosen"}); titles: a tooltip per position;
    special_tokens: the tokenizer's special tokens ([EOS], language tags...), given the class "special".
    """
    classes = classes or {}
    chips = []
    for index, token in enumerate(tokens):
        names = [
            "tok",
            *(["special"] if token in special_tokens else []),
            *([classes[index]] if index in classes else []),
        ]
        tip = f' title="{html.escape(titles[index])}"' if titles is not None else ""
        chips.append(f'<span class="{" ".join(names)}"{tip}>{html.escape(token)}</span>')
    return "".join(chips)


def decoder_rows(inputs: list[str], predicted: list[str]) -> list[str]:
    """The one name of a decoder row everywhere: "input → predicted" (the token the decoder reads at
    that step and the token it predicts there), e.g. "▁man → ▁in"."""
    return [f"{read} → {out}" for read, out in zip(inputs, predicted)]
