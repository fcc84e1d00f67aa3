"""Planted-fault mutation check (issue 12): does the fast test suite catch a wrong picture?

Each fault below is one exact text replacement in one file. For every fault the script copies the
repository to a temporary directory (the working tree is never touched), plants the fault, runs a
pytest selection with -x and a time limit, and reports it as
  caught    the tests failed (or errored) with the fault planted,
  timeout   the run exceeded --timeout (counted as caught: the suite would not pass),
  SURVIVED  every selected test passed with the fault planted,
  stale     the snippet is not in the file (or not exactly once): re-anchor it, it was not run.
The score is caught / (caught + survived); stale faults are listed, never silently skipped.

    python3 scripts/mutation_check.py --stale              # seconds: is every snippet still in its file?
    python3 scripts/mutation_check.py --list               # the faults
    python3 scripts/mutation_check.py --suite new          # provenance + view tests (issue 12); ~1 min a fault
    python3 scripts/mutation_check.py --suite views --only view-,pipeline-,heatmap-
    python3 scripts/mutation_check.py --suite old          # only the tests that predate issue 12
    python3 scripts/mutation_check.py --tests tests/test_beam.py --only beam-
    python3 scripts/mutation_check.py                      # default: all of them (slow: run --only subsets
                                                           # in parallel processes on a small machine)

Run --stale after any refactor of model/, ui/ or visualizer/ and re-anchor what it lists (a stale
fault tests nothing); add a fault with every new view or model module, and a test for every survivor
that is not an equivalent mutant.

To add a fault, append a Fault(name, file, old, new, description) to FAULTS: `old` must occur
exactly once in `file`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OLD_MODEL_TESTS = ["tests/test_model_equivalence.py", "tests/test_model_invariants.py", "tests/test_beam.py",
                   "tests/test_analysis.py", "tests/test_train.py", "tests/test_learning.py"]
PROVENANCE_TESTS = ["tests/test_provenance_trace.py", "tests/test_interventions.py", "tests/test_provenance_decoding.py",
                    "tests/test_training_math.py", "tests/test_eos_trace.py"]  # fastest to fail first
VIEW_TESTS = ["tests/test_view_provenance.py", "tests/test_rollout.py", "tests/test_step_changes.py",
              "tests/test_kv_cache_view.py", "tests/test_film.py"]  # the views and the newer model modules

# Independent test files: a fault is caught by "both" exactly when "old" or "new" catches it.
SUITES = {"old": OLD_MODEL_TESTS, "new": PROVENANCE_TESTS + VIEW_TESTS, "views": VIEW_TESTS,
          "both": PROVENANCE_TESTS + VIEW_TESTS + OLD_MODEL_TESTS}


@dataclass(frozen=True)
class Fault:
    name: str  # short id, also used by --only
    file: str  # path relative to the repository root
    old: str  # exact text, must occur exactly once
    new: str  # replacement
    description: str


FAULTS = [
    # ---- the seven of issue 12
    Fault("trace-cross-layers-reversed", "model/tracing.py",
          'cross_attention=_numpy(decoded.cross_attentions, "weights"),',
          'cross_attention=_numpy(decoded.cross_attentions[::-1], "weights"),',
          "the trace stores cross-attention layers in reverse order"),
    Fault("trace-encoder-heads-reversed", "model/tracing.py",
          'encoder_attention=_numpy(encoded.self_attentions, "weights"),',
          'encoder_attention=_numpy(encoded.self_attentions, "weights")[:, ::-1].copy(),',
          "the trace stores encoder heads in reverse order"),
    Fault("view-layers-reversed", "ui/attention.py",
          "    l = clamp(layer, weights.shape[0])\n",
          "    l = weights.shape[0] - 1 - clamp(layer, weights.shape[0])\n",
          "the app's attention view picks layers in reverse (view half of issue 12: model tests cannot see it)"),
    Fault("prefix-cache-no-causal-mask", "model/decoding.py",
          "mask = decoder_mask(new, config.pad_id) if cache is None or cache.length == 0 else None",
          "mask = None if cache is not None else decoder_mask(new, config.pad_id)",
          "a forced prefix fed to the KV-cached decoder without the causal mask"),
    Fault("dropout-on-residual-sum", "model/layers.py",
          "x = self.norm1(x + self.dropout(attended))\n        return self.norm2(",
          "x = self.norm1(self.dropout(x + attended))\n        return self.norm2(",
          "encoder dropout applied to the residual sum instead of the sub-layer output"),
    Fault("ablation-mirror-head", "model/ablation.py",
          "mask[layer, head] = 0.0",
          "mask[layer, n_heads - 1 - head] = 0.0",
          "head ablation switches off head h-1-i instead of i"),
    Fault("no-label-smoothing", "model/train.py",
          "label_smoothing=label_smoothing, reduction=\"sum\")",
          "label_smoothing=0.0, reduction=\"sum\")",
          "label smoothing silently dropped from the training loss"),
    # ---- attention, masks, positions, embeddings
    Fault("attention-scale-dk", "model/attention.py",
          "scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)",
          "scores = query @ key.transpose(-2, -1) / d_k",
          "scores divided by d_k instead of sqrt(d_k)"),
    Fault("trace-scores-after-mask", "model/attention.py",
          "return attended @ value, weights, scores",
          "return attended @ value, weights, masked",
          "the scores returned (and shown) are the masked scores, not QK^T / sqrt(d_k)"),
    Fault("head-mask-flipped", "model/attention.py",
          "heads = heads * head_mask.to(heads.dtype)[None, :, None, None]",
          "heads = heads * head_mask.flip(0).to(heads.dtype)[None, :, None, None]",
          "the attention module applies the head mask mirrored"),
    Fault("decoder-mask-ignores-padding", "model/masks.py",
          "return padding_mask(tgt_ids, pad_id) & causal_mask(tgt_ids.size(1), tgt_ids.device)",
          "return causal_mask(tgt_ids.size(1), tgt_ids.device)",
          "the decoder self-attention mask drops target padding"),
    Fault("pe-cos-is-sin", "model/positional.py",
          "table[:, 1::2] = torch.cos(angles)",
          "table[:, 1::2] = torch.sin(angles)",
          "odd positional-encoding dimensions use sin instead of cos"),
    Fault("embedding-scale-fourth-root", "model/transformer.py",
          "scaled = self.embedding(ids) * math.sqrt(self.config.d_model)",
          "scaled = self.embedding(ids) * self.config.d_model ** 0.25",
          "embeddings scaled by d_model^(1/4) instead of sqrt(d_model)"),
    Fault("no-embedding-dropout", "model/transformer.py",
          "return self.embedding_dropout(scaled)",
          "return scaled",
          "no dropout on embeddings + positions"),
    Fault("ffn-dropout-after-output", "model/layers.py",
          "return self.linear2(self.dropout(F.relu(self.linear1(x))))",
          "return self.dropout(self.linear2(F.relu(self.linear1(x))))",
          "feed-forward dropout moved from the inner activation to the output"),
    Fault("encoder-ffn-pre-ln", "model/layers.py",
          "return self.norm2(x + self.dropout(self.feed_forward(x)))",
          "return x + self.dropout(self.feed_forward(self.norm2(x)))",
          "encoder feed-forward sub-layer is pre-LN instead of post-LN"),
    Fault("cross-attention-no-source-mask", "model/layers.py",
          "cross_attention = self.cross_attention(x, *self._cross_key_value(memory, cache), src_mask, cross_head_mask)",
          "cross_attention = self.cross_attention(x, *self._cross_key_value(memory, cache), None, cross_head_mask)",
          "cross-attention ignores source padding (written-out path: the trace)"),
    Fault("fused-cross-attention-no-source-mask", "model/layers.py",
          "attended = self.cross_attention.fused(x, *self._cross_key_value(memory, cache), src_mask, cross_head_mask)",
          "attended = self.cross_attention.fused(x, *self._cross_key_value(memory, cache), None, cross_head_mask)",
          "cross-attention ignores source padding (fused path: greedy and beam decoding)"),
    # ---- ablation routing
    Fault("cross-ablation-routed-to-self", "model/ablation.py",
          'cross = self.head_mask("cross", config.n_decoder_layers',
          'cross = self.head_mask("decoder_self", config.n_decoder_layers',
          "switching off a cross-attention head switches off the decoder self-attention head"),
    Fault("no-pe-ablation-in-decoder", "model/transformer.py",
          "return self.embed(tgt, offset, positions=use_positions), layer_caches",
          "return self.embed(tgt, offset), layer_caches",
          "removing positional encodings affects the encoder only"),
    Fault("token-probabilities-decoder-unablated", "model/analysis.py",
          "list(source_ids), tensors), output_ids, tensors)",
          "list(source_ids), tensors), output_ids, tensors._replace(decoder_self=None, cross=None))",
          "token_probabilities applies the ablation to the encoder only"),
    # ---- decoding, cache and trace assembly
    Fault("cache-position-offset-zero", "model/transformer.py",
          "offset = cache.length if cache is not None else 0",
          "offset = 0",
          "cached decoder steps all get positional encoding 0"),
    Fault("trace-target-tokens-are-outputs", "model/tracing.py",
          "target_tokens=tokenizer.tokens(target_ids),",
          "target_tokens=tokenizer.tokens(output_ids),",
          "decoder query labels are the outputs (shifted by one step)"),
    Fault("trace-chosen-is-top1", "model/tracing.py",
          "chosen_probs=probs.gather(1, chosen[:, None])[:, 0].cpu().numpy(),",
          "chosen_probs=top_probs[:, 0].cpu().numpy(),",
          "chosen probability is the top candidate's, wrong for forced (branching) steps"),
    Fault("trace-entropy-nats", "model/tracing.py",
          "entropy = -(probs * forced.log_probs).sum(-1) / math.log(2)",
          "entropy = -(probs * forced.log_probs).sum(-1)",
          "entropy reported in nats while labelled bits"),
    Fault("trace-self-scores-layers-reversed", "model/tracing.py",
          'decoder_self_scores=_numpy(decoded.self_attentions, "scores"),',
          'decoder_self_scores=_numpy(decoded.self_attentions[::-1], "scores"),',
          "decoder self-attention scores stored in reverse layer order"),
    Fault("trace-causal-mask-transposed", "model/tracing.py",
          "causal_mask=causal_mask(n_target)[0, 0].numpy(),",
          "causal_mask=causal_mask(n_target)[0, 0].numpy().T,",
          "the causal mask shown is transposed"),
    Fault("logit-lens-layers-reversed", "model/tracing.py",
          "torch.stack([h[0] for h in layer_hiddens[:-1]], dim=1)",
          "torch.stack([h[0] for h in layer_hiddens[-2::-1]], dim=1)",
          "logit lens reads the intermediate layers in reverse order"),
    Fault("logit-lens-topk-softmax", "model/tracing.py",
          "top_probs = (top_logits - logits.logsumexp(dim=-1, keepdim=True)).exp()",
          "top_probs = top_logits.softmax(dim=-1)",
          "logit lens probabilities normalised over the top-k only"),
    # ---- beam search
    Fault("beam-self-keys-not-reordered", "model/beam.py",
          "layer_cache.self_key = layer_cache.self_key.index_select(0, parents)",
          "layer_cache.self_key = layer_cache.self_key",
          "beam reselection forgets to reorder cached self-attention keys"),
    Fault("beam-sorted-by-log-prob", "model/beam.py",
          "hypotheses.sort(key=lambda h: h.score, reverse=True)",
          "hypotheses.sort(key=lambda h: h.log_prob, reverse=True)",
          "beam hypotheses ranked by log P instead of the length-penalised score"),
    Fault("beam-eos-any-rank", "model/beam.py",
          "ends = is_eos & (ranks[: is_eos.size(1)] < K) & torch.isfinite(top_log_probs)",
          "ends = is_eos & torch.isfinite(top_log_probs)",
          "[EOS] candidates ranked K..2K also finish hypotheses"),
    Fault("beam-log-softmax-as-softmax-log", "model/beam.py",
          "log_probs = F.log_softmax(model.project(hidden[:, -1]).float(), dim=-1)",
          "log_probs = F.softmax(model.project(hidden[:, -1]).float(), dim=-1).log()",
          "equivalent mutant (control): log(softmax) computed in two steps"),
    # ---- training loss
    Fault("loss-counts-padding", "model/train.py",
          "labels.flatten(), ignore_index=pad_id,",
          "labels.flatten(),",
          "the training loss counts [PAD] labels"),
    # ---- analysis
    Fault("diagnostics-entropy-nats", "model/analysis.py",
          "entropy = -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1)",
          "entropy = -(w * np.log(np.clip(w, 1e-12, None))).sum(-1)",
          "head diagnostics entropy in nats while labelled bits"),
    # ---- the views (issue 12, view half): caught by tests/test_view_provenance.py
    Fault("view-head-mirror", "ui/attention.py",
          "return clamp(int(head) if str(head).isdigit() else 1, weights.shape[1])",
          "return weights.shape[1] - 1 - clamp(int(head) if str(head).isdigit() else 1, weights.shape[1])",
          "the attention tab shows head h-1-i for head i"),
    Fault("view-step-off-by-one", "ui/common.py",
          "return int(np.clip(int(step or 1), 1, trace.num_steps)) - 1",
          "return int(np.clip(int(step or 1), 1, trace.num_steps)) - 1 + (int(step or 1) < trace.num_steps)",
          "every step view shows the next step (except at the last)"),
    Fault("view-mean-over-layers", "ui/attention.py",
          "weights[l].mean(axis=0), queries, keys",
          "weights.mean(axis=(0, 1)), queries, keys",
          "'mean of heads' averages every layer's heads, not the chosen layer's"),
    Fault("pipeline-softmax-layer-1", "ui/attention.py",
          "part.weights[l, h], part.queries",
          "part.weights[0, h], part.queries",
          "inside one head: the softmax panel shows layer 1"),
    Fault("pipeline-scores-premasked", "ui/attention.py",
          "part.scores[l, h], np.asarray(part.mask)",
          "np.where(part.mask, part.scores[l, h], -1e9), np.asarray(part.mask)",
          "inside one head: the 'scores' panel already has the mask in it"),
    Fault("heatmap-transposed", "visualizer/heatmap.py",
          'dict(type="heatmap", z=z, x=indexed(col_labels)',
          'dict(type="heatmap", z=np.asarray(z).T, x=indexed(col_labels)',
          "every token heatmap is drawn transposed (square ones silently)"),
    Fault("grid-heads-mirrored", "visualizer/attention.py",
          "z=w[layer, head], x=x, y=y",
          "z=w[layer, n_heads - 1 - head], x=x, y=y",
          "the all-heads grid puts head h-1-i under the title of head i"),
    Fault("masks-decoder-transposed", "ui/positions.py",
          "trace.causal_mask, trace.decoder_mask, trace.cross_mask",
          "trace.causal_mask, trace.decoder_mask.T, trace.cross_mask",
          "the masks tab shows the decoder self-attention mask transposed"),
    Fault("pe-labels-target-tokens", "ui/positions.py",
          "tokens=trace.source_tokens)",
          "tokens=trace.target_tokens)",
          "positional-encoding rows labelled with the decoder's tokens"),
    Fault("candidates-previous-step", "ui/next_token.py",
          "trace.candidate_tokens[t], trace.candidate_probs[t]",
          "trace.candidate_tokens[t], trace.candidate_probs[max(t - 1, 0)]",
          "the candidates' bars show the previous step's probabilities"),
    Fault("lens-layers-reversed-in-view", "ui/explain/readouts.py",
          "trace.logit_lens_tokens[t], trace.logit_lens_probs[t],",
          "trace.logit_lens_tokens[t], trace.logit_lens_probs[t][::-1],",
          "the logit-lens view shows layer probabilities in reverse"),
    Fault("alignment-layers-reversed", "ui/explain/readouts.py",
          "chosen = sorted({int(layer) - 1 for layer",
          "chosen = sorted({n_layers - int(layer) for layer",
          "the alignment view averages the mirror of the ticked decoder layers"),
    Fault("diagnostics-layers-reversed", "visualizer/explain.py",
          "type=\"heatmap\", z=values, x=heads, y=layers",
          "type=\"heatmap\", z=values[::-1], x=heads, y=layers",
          "head diagnostics draw layer L-1-l in the row of layer l"),
    Fault("diagnostics-choice-swapped", "ui/explain/diagnostics.py",
          "f\"{l + 1}-{h + 1}\")",
          "f\"{h % n_layers + 1}-{l + 1}\")",
          "the head list opens another head than the one it names"),
    Fault("ablation-choice-mirror-head", "ui/explain/ablation.py",
          "(layer, int(head) - 1)",
          "(layer, config.n_heads - int(head))",
          "the 'switch heads off' boxes switch off head h+1-i"),
    # ---- the model modules added after the first pass
    Fault("rollout-order-reversed", "model/rollout.py",
          "current = step @ current",
          "current = current @ step",
          "attention rollout multiplies the layers in the wrong order"),
    Fault("rollout-residual-swapped", "model/rollout.py",
          "(1.0 - residual) * mean + residual * identity",
          "residual * mean + (1.0 - residual) * identity",
          "rollout weighs attention by the residual share (equal at the default 0.5)"),
    Fault("cross-rollout-transposed", "model/rollout.py",
          "_normalise_rows(cross.mean(axis=1)) @ rollout  #",
          "_normalise_rows(cross.mean(axis=1)) @ rollout.T  #",
          "cross-attention carried down through the transposed encoder rollout"),
    Fault("step-change-compares-same-step", "model/step_changes.py",
          "previous = w[:, :, step - 1, :previous_width]",
          "previous = w[:, :, step, :previous_width]",
          "the step-change view compares a row with itself"),
    Fault("kv-cache-keys-first-row", "model/kv_cache_view.py",
          "key_rows.append(np.stack([_numpy(layer.self_key[0, :, step])",
          "key_rows.append(np.stack([_numpy(layer.self_key[0, :, 0])",
          "the KV-cache view records the first key at every step"),
    Fault("film-ignores-direction", "model/film.py",
          "trace = translate(model, tokenizer, text, direction, max_new_tokens",
          "trace = translate(model, tokenizer, text, \"de-en\", max_new_tokens",
          "the training film translates every probe German to English"),
]


def copy_repository(destination: Path) -> None:
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", "runs")
    shutil.copytree(ROOT, destination, ignore=ignore, symlinks=True)


def run_tests(workdir: Path, tests: list[str], timeout: float) -> tuple[str, float, str]:
    """-> (outcome 'passed' | 'failed' | 'timeout', seconds, last output line)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no stale .pyc after an edit within a second
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not browser", *tests]
    start = time.time()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.time() - start, ""
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return ("passed" if done.returncode == 0 else "failed"), time.time() - start, (lines[-1] if lines else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=sorted(SUITES), default="both",
                        help="old: model tests before issue 12; new: provenance tests; both (default)")
    parser.add_argument("--tests", nargs="+", help="explicit pytest selection (overrides --suite)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per fault run")
    parser.add_argument("--only", default="", help="comma-separated name prefixes of faults to run")
    parser.add_argument("--list", action="store_true", help="list the faults and exit")
    parser.add_argument("--stale", action="store_true", help="list faults whose snippet is not exactly once in its file")
    args = parser.parse_args(argv)
    args.tests = args.tests or SUITES[args.suite]

    faults = [f for f in FAULTS if not args.only or any(f.name.startswith(p) for p in args.only.split(","))]
    if args.list:
        for fault in faults:
            print(f"{fault.name:40s} {fault.file:22s} {fault.description}")
        return 0
    if args.stale:
        stale = [f for f in faults if not (ROOT / f.file).exists()
                 or (ROOT / f.file).read_text(encoding="utf-8").count(f.old) != 1]
        for fault in stale:
            print(f"stale     {fault.name:40s} {fault.file}")
        print(f"{len(stale)} of {len(faults)} faults stale")
        return 1 if stale else 0
    missing = [t for t in args.tests if not (ROOT / t.split("::")[0]).exists()]
    if missing:
        print(f"error: no such test file(s): {', '.join(missing)}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="mutation-") as temporary:
        workdir = Path(temporary) / "repo"
        copy_repository(workdir)
        outcome, seconds, summary = run_tests(workdir, args.tests, args.timeout)
        print(f"baseline (no fault): {outcome} in {seconds:.0f} s  {summary}", flush=True)
        if outcome != "passed":
            print("error: the selected tests fail without any fault; fix that first", file=sys.stderr)
            return 2
        results: dict[str, list[str]] = {"caught": [], "timeout": [], "SURVIVED": [], "stale": []}
        for fault in faults:
            path = workdir / fault.file
            original = path.read_text(encoding="utf-8") if path.exists() else None
            count = original.count(fault.old) if original is not None else 0
            if count != 1:
                status = "stale"
                detail = "file missing" if original is None else f"snippet found {count} times, expected once"
            else:
                path.write_text(original.replace(fault.old, fault.new), encoding="utf-8")
                try:
                    outcome, seconds, summary = run_tests(workdir, args.tests, args.timeout)
                finally:
                    path.write_text(original, encoding="utf-8")
                status = {"failed": "caught", "timeout": "timeout", "passed": "SURVIVED"}[outcome]
                detail = f"{seconds:.0f} s  {summary}"
            results[status].append(fault.name)
            print(f"{status:9s} {fault.name:40s} {detail}", flush=True)

    caught = len(results["caught"]) + len(results["timeout"])
    ran = caught + len(results["SURVIVED"])
    print(f"\nscore: {caught}/{ran} caught ({100 * caught / max(ran, 1):.0f}%); "
          f"stale (not run): {len(results['stale'])}")
    for status in ("SURVIVED", "stale"):
        if results[status]:
            print(f"{status}: {', '.join(results[status])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
