"""The planted faults of scripts/mutation_check.py in what a large model's decoding reads only where needed: the
greedy choice's int8 screen (model/decoding/greedy_choice.py) and the logit lens, read when its view opens
(model/analysis/logit_lens.py, ui/explain/lens.py). One exact text replacement each; `old` must occur exactly once in
`file` (`python3 scripts/mutation_check.py --stale` checks).
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

READOUT_FAULTS = [
    # ---- the greedy choice: caught by tests/model/decoding/test_greedy_choice.py and the Marian provenance tests
    Fault(
        "screen-without-the-copy-error",
        "model/decoding/greedy_choice.py",
        "bound = bound.add_(self.copy_error, alpha=float(rounded.abs().sum()))",
        "bound = bound.add_(self.copy_error, alpha=0.0)",
        "the screen's bound leaves out the int8 copy's own error",
    ),
    Fault(
        "screen-picks-its-own-argmax",
        "model/decoding/greedy_choice.py",
        "candidates = torch.nonzero(logits + bound >= (logits - bound).max())[:, 0]",
        "candidates = logits.argmax().reshape(1)",
        "the greedy choice is the int8 screen's argmax, not the float32 projection's",
    ),
    Fault(
        "screen-kept-after-the-weights-change",
        "model/decoding/greedy_choice.py",
        "if known is None or known[0] != version:",
        "if known is None:",
        "a model whose weights changed keeps choosing through its old weights' screen",
    ),
    Fault(
        "screen-bans-nothing",
        "model/decoding/greedy_choice.py",
        '            logits = logits.index_fill(0, banned, float("-inf"))\n',
        "            pass\n",
        "the screened choice may pick a banned id (Marian's <pad>)",
    ),
    # ---- the logit lens: caught by tests/model/analysis/test_logit_lens.py and tests/ui/explain/test_lens_panel.py
    Fault(
        "logit-lens-layers-reversed",
        "model/analysis/logit_lens.py",
        "torch.stack([hidden[0] for hidden in layer_hiddens], dim=1)",
        "torch.stack([hidden[0] for hidden in layer_hiddens[::-1]], dim=1)",
        "logit lens reads the intermediate layers in reverse order",
    ),
    Fault(
        "logit-lens-topk-softmax",
        "model/analysis/logit_lens.py",
        "return (top_logits - logits.logsumexp(dim=-1, keepdim=True)).exp(), top_ids",
        "return top_logits.softmax(dim=-1), top_ids",
        "logit lens probabilities normalised over the top-k only",
    ),
    Fault(
        "lens-layers-reversed-in-view",
        "ui/explain/lens.py",
        "        lens.probs[t],\n",
        "        lens.probs[t][::-1],\n",
        "the logit-lens view shows layer probabilities in reverse",
    ),
    Fault(
        "lens-kept-for-another-translation",
        "ui/explain/lens.py",
        'known["lens"] if sentence_matches(trace, known) else',
        'known["lens"] if known is not None else',
        "the logit lens read for one translation is shown for the next",
    ),
    Fault(
        "lens-read-without-the-traces-ablation",
        "model/analysis/logit_lens.py",
        "Ablation.from_description(trace.ablation)",
        "Ablation()",
        "the logit lens of a run with heads off or without positions is read from the intact model",
    ),
    Fault(
        "lens-reading-layer-off-by-one",
        "ui/explain/lens.py",
        'f"At step {t + 1} the decoder settles on {code(chosen)} from layer {settled + 1} of {n_layers} on; "',
        'f"At step {t + 1} the decoder settles on {code(chosen)} from layer {settled} of {n_layers} on; "',
        "the logit lens's opening names the layer below the one where the decoder settles",
    ),
]
