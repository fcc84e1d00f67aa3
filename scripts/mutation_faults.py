"""The planted faults of scripts/mutation_check.py: one exact text replacement each, `Fault`.

`old` must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale` checks). Grouped by
what they break. Here, MODEL_FAULTS: the first seven, attention/masks/positions, ablation routing, decoding and
trace assembly (model/decoding/teacher_forced.py), beam search, training, the OPUS-MT tokenizer, analysis. The views (ui/, visualizer/),
the newer model modules and the comparison are VIEW_FAULTS in scripts/mutation_faults_views.py, the corpus panels
CORPUS_FAULTS in scripts/mutation_faults_corpus.py; scripts/mutation_check.py runs MODEL_FAULTS, then those. A fault that no test can tell apart (an equivalent
mutant) says so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str  # short id, also used by --only
    file: str  # path relative to the repository root
    old: str  # exact text, must occur exactly once
    new: str  # replacement
    description: str


MODEL_FAULTS = [
    # ---- the first seven
    Fault(
        "trace-cross-layers-reversed",
        "model/decoding/teacher_forced.py",
        'cross_attention=_numpy(decoded.cross_attentions, "weights"),',
        'cross_attention=_numpy(decoded.cross_attentions[::-1], "weights"),',
        "the trace stores cross-attention layers in reverse order",
    ),
    Fault(
        "trace-encoder-heads-reversed",
        "model/decoding/teacher_forced.py",
        'encoder_attention=_numpy(encoded.self_attentions, "weights"),',
        'encoder_attention=_numpy(encoded.self_attentions, "weights")[:, ::-1].copy(),',
        "the trace stores encoder heads in reverse order",
    ),
    Fault(
        "view-layers-reversed",
        "ui/attention.py",
        "    l = clamp(layer, weights.shape[0])\n",
        "    l = weights.shape[0] - 1 - clamp(layer, weights.shape[0])\n",
        "the app's attention view picks layers in reverse (a view fault: model tests cannot see it)",
    ),
    Fault(
        "prefix-cache-no-causal-mask",
        "model/decoding/greedy.py",
        "mask = decoder_mask(new, config.pad_id) if cache is None or cache.length == 0 else None",
        "mask = None if cache is not None else decoder_mask(new, config.pad_id)",
        "a forced prefix fed to the KV-cached decoder without the causal mask",
    ),
    Fault(
        "dropout-on-residual-sum",
        "model/core/layers.py",
        "return super().forward(x + self.dropout(sublayer_output))",
        "return super().forward(self.dropout(x + sublayer_output))",
        "Add & Norm applies dropout to the residual sum instead of the sub-layer output",
    ),
    Fault(
        "ablation-mirror-head",
        "model/decoding/ablation.py",
        "mask[layer, head] = 0.0",
        "mask[layer, n_heads - 1 - head] = 0.0",
        "head ablation switches off head h-1-i instead of i",
    ),
    Fault(
        "no-label-smoothing",
        "model/training/loss.py",
        '        label_smoothing=label_smoothing,\n        reduction="sum",\n',
        '        label_smoothing=0.0,\n        reduction="sum",\n',
        "label smoothing silently dropped from the training loss",
    ),
    # ---- attention, masks, positions, embeddings
    Fault(
        "attention-scale-dk",
        "model/core/attention.py",
        "scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)",
        "scores = query @ key.transpose(-2, -1) / d_k",
        "scores divided by d_k instead of sqrt(d_k)",
    ),
    Fault(
        "trace-scores-after-mask",
        "model/core/attention.py",
        "return attended @ value, weights, scores",
        "return attended @ value, weights, masked",
        "the scores returned (and shown) are the masked scores, not QK^T / sqrt(d_k)",
    ),
    Fault(
        "fused-attention-dropout-in-eval",
        "model/core/attention.py",
        "dropout_p = self.attention_dropout.p if self.training else 0.0",
        "dropout_p = self.attention_dropout.p",
        "the fused kernel drops attention weights in eval mode too (greedy, beam, validation)",
    ),
    Fault(
        "head-mask-flipped",
        "model/core/attention.py",
        "heads = heads * head_mask.to(heads.dtype)[None, :, None, None]",
        "heads = heads * head_mask.flip(0).to(heads.dtype)[None, :, None, None]",
        "the attention module applies the head mask mirrored",
    ),
    Fault(
        "decoder-mask-ignores-padding",
        "model/core/masks.py",
        "return keys & causal_mask(tgt_ids.size(1), tgt_ids.device)",
        "return causal_mask(tgt_ids.size(1), tgt_ids.device)",
        "the decoder self-attention mask drops target padding",
    ),
    Fault(
        "pe-cos-is-sin",
        "model/core/positional.py",
        "table[:, 1::2] = torch.cos(angles)",
        "table[:, 1::2] = torch.sin(angles)",
        "odd positional-encoding dimensions use sin instead of cos",
    ),
    Fault(
        "embedding-scale-fourth-root",
        "model/core/transformer.py",
        "scaled = self.embedding(ids) * math.sqrt(self.config.d_model)",
        "scaled = self.embedding(ids) * self.config.d_model ** 0.25",
        "embeddings scaled by d_model^(1/4) instead of sqrt(d_model)",
    ),
    Fault(
        "no-embedding-dropout",
        "model/core/transformer.py",
        "return self.embedding_dropout(scaled)",
        "return scaled",
        "no dropout on embeddings + positions",
    ),
    Fault(
        "ffn-dropout-after-output",
        "model/core/layers.py",
        "return self.linear2(self.dropout(self.activation(self.linear1(x))))",
        "return self.dropout(self.linear2(self.activation(self.linear1(x))))",
        "feed-forward dropout moved from the inner activation to the output",
    ),
    Fault(
        "encoder-ffn-pre-ln",
        "model/core/layers.py",
        "return EncoderLayerOutput(self.norm2(x, self.feed_forward(x)), attention)",
        "return EncoderLayerOutput(x + self.norm2.dropout(self.feed_forward(nn.LayerNorm.forward(self.norm2, x))),"
        " attention)",
        "encoder feed-forward sub-layer is pre-LN instead of post-LN",
    ),
    Fault(
        "cross-attention-no-source-mask",
        "model/core/layers.py",
        "x, memory, src_mask, cross_head_mask, cross_cache,",
        "x, memory, None if output_attentions else src_mask, cross_head_mask, cross_cache,",
        "cross-attention ignores source padding (written-out kernel: the trace)",
    ),
    Fault(
        "fused-cross-attention-no-source-mask",
        "model/core/layers.py",
        "x, memory, src_mask, cross_head_mask, cross_cache,",
        "x, memory, src_mask if output_attentions else None, cross_head_mask, cross_cache,",
        "cross-attention ignores source padding (fused kernel: training, greedy and beam decoding)",
    ),
    # ---- ablation routing
    Fault(
        "cross-ablation-routed-to-self",
        "model/decoding/ablation.py",
        'cross = self.head_mask("cross", config.n_decoder_layers',
        'cross = self.head_mask("decoder_self", config.n_decoder_layers',
        "switching off a cross-attention head switches off the decoder self-attention head",
    ),
    Fault(
        "no-pe-ablation-in-decoder",
        "model/core/transformer.py",
        "x = self.embed(tgt, offset, positions=interventions.use_positions)",
        "x = self.embed(tgt, offset)",
        "removing positional encodings affects the encoder only",
    ),
    Fault(
        "token-probabilities-decoder-unablated",
        "model/analysis/readouts.py",
        "list(source_ids), tensors), output_ids, tensors)",
        "list(source_ids), tensors), output_ids, tensors._replace(decoder_self=None, cross=None))",
        "token_probabilities applies the ablation to the encoder only",
    ),
    # ---- decoding, cache and trace assembly
    Fault(
        "cache-position-offset-zero",
        "model/core/transformer.py",
        "offset = cache.length if cache is not None else 0",
        "offset = 0",
        "cached decoder steps all get positional encoding 0",
    ),
    Fault(
        "trace-target-tokens-are-outputs",
        "model/decoding/teacher_forced.py",
        "target_tokens=tokenizer.tokens(target_ids),",
        "target_tokens=tokenizer.tokens(output_ids),",
        "decoder query labels are the outputs (shifted by one step)",
    ),
    Fault(
        "trace-chosen-is-top1",
        "model/decoding/teacher_forced.py",
        "chosen_probs=probs.gather(1, chosen[:, None])[:, 0].cpu().numpy(),",
        "chosen_probs=top_probs[:, 0].cpu().numpy(),",
        "chosen probability is the top candidate's, wrong for forced (branching) steps",
    ),
    Fault(
        "trace-entropy-nats",
        "model/decoding/teacher_forced.py",
        "entropy = -(probs * forced.log_probs).sum(-1) / math.log(2)",
        "entropy = -(probs * forced.log_probs).sum(-1)",
        "entropy reported in nats while labelled bits",
    ),
    Fault(
        "trace-self-scores-layers-reversed",
        "model/decoding/teacher_forced.py",
        'decoder_self_scores=_numpy(decoded.self_attentions, "scores"),',
        'decoder_self_scores=_numpy(decoded.self_attentions[::-1], "scores"),',
        "decoder self-attention scores stored in reverse layer order",
    ),
    Fault(
        "trace-causal-mask-transposed",
        "model/decoding/teacher_forced.py",
        "causal_mask=causal_mask(n_target)[0, 0].numpy(),",
        "causal_mask=causal_mask(n_target)[0, 0].numpy().T,",
        "the causal mask shown is transposed",
    ),
    # ---- beam search
    Fault(
        "beam-self-keys-not-reordered",
        "model/decoding/beam.py",
        "layer_cache.self_attention.select(parents)",
        "layer_cache.self_attention.select(torch.arange(len(parents)))",
        "beam reselection forgets to reorder cached self-attention keys",
    ),
    Fault(
        "beam-sorted-by-log-prob",
        "model/decoding/beam.py",
        "hypotheses.sort(key=lambda h: h.score, reverse=True)",
        "hypotheses.sort(key=lambda h: h.log_prob, reverse=True)",
        "beam hypotheses ranked by log P instead of the length-penalised score",
    ),
    Fault(
        "beam-eos-any-rank",
        "model/decoding/beam.py",
        "ends = is_eos & (ranks[: is_eos.size(1)] < K) & torch.isfinite(top_log_probs)",
        "ends = is_eos & torch.isfinite(top_log_probs)",
        "[EOS] candidates ranked K..2K also finish hypotheses",
    ),
    Fault(
        "beam-log-softmax-as-softmax-log",
        "model/decoding/beam.py",
        "log_probs = F.log_softmax(model.project(hidden[:, -1]).float(), dim=-1)",
        "log_probs = F.softmax(model.project(hidden[:, -1]).float(), dim=-1).log()",
        "equivalent mutant (control): log(softmax) computed in two steps",
    ),
    # ---- training loss
    Fault(
        "loss-counts-padding",
        "model/training/loss.py",
        "        labels.flatten(),\n        ignore_index=pad_id,\n",
        "        labels.flatten(),\n",
        "the training loss counts [PAD] labels",
    ),
    Fault(
        "average-weights-to-the-first",
        "model/training/average.py",
        "torch.stack([s[name].float() for s in state_dicts]).mean(0)",
        "torch.stack([s[name].float() for s in state_dicts])[: len(state_dicts) - 1].mean(0)",
        "checkpoint averaging leaves the newest checkpoint out of the mean",
    ),
    Fault(
        "average-newest-by-order",
        "model/training/average.py",
        "sorted((load_local_checkpoint(d) for d in directories), key=checkpoint_step)",
        "[load_local_checkpoint(d) for d in directories]",
        "the averaged checkpoint takes the metrics and log of the last one named, not the newest step",
    ),
    # ---- an OPUS-MT checkpoint's tokenizer (tests/model/text/test_marian_tokenizer.py)
    Fault(
        "marian-target-side-source-spm",
        "model/text/marian_tokenizer.py",
        "return self._ids(text, self.target_model)",
        "return self._ids(text, self.source_model)",
        "the source SentencePiece model cuts the target side",
    ),
    Fault(
        "marian-ids-from-spm-numbering",
        "model/text/marian_tokenizer.py",
        "ids.extend(self.vocab.get(piece, self.unk_id) for piece in pieces)",
        "ids.extend(max(model.piece_to_id(piece), 0) for piece in pieces)",
        "ids from SentencePiece's own numbering instead of vocab.json",
    ),
    Fault(
        "marian-source-without-eos",
        "model/text/marian_tokenizer.py",
        "return [*subwords, self.eos_id]",
        "return list(subwords)",
        "the Marian source is not closed by </s>",
    ),
    Fault(
        "marian-decode-keeps-eos",
        "model/text/marian_tokenizer.py",
        "if int(i) not in self.special_ids]",
        "if int(i) != self.pad_id]",
        "Marian decode writes </s> and <unk> into the text",
    ),
    # ---- an OPUS-MT checkpoint in the core (tests/model/checkpoints/test_marian_provenance.py)
    Fault(
        "marian-positions-interleaved",
        "model/checkpoints/marian.py",
        'positional_layout="halves",',
        'positional_layout="interleaved",',
        "the Marian sinusoids interleaved (sin, cos, sin, ...) instead of all sines then all cosines",
    ),
    Fault(
        "marian-relu-for-swish",
        "model/checkpoints/marian.py",
        'ACTIVATION_NAMES = {"swish": "swish", "silu": "swish", "relu": "relu"}',
        'ACTIVATION_NAMES = {"swish": "relu", "silu": "relu", "relu": "relu"}',
        "the Marian feed-forward uses relu instead of swish",
    ),
    Fault(
        "marian-logits-bias-dropped",
        "model/core/transformer.py",
        "return logits + self.final_logits_bias if self.config.logits_bias else logits",
        "return logits",
        "Marian's final_logits_bias is not added to the logits",
    ),
    Fault(
        "marian-starts-from-bos",
        "model/checkpoints/marian.py",
        "            bos_id=start,\n",
        '            bos_id=config.get("bos_token_id", start) if config.get("bos_token_id") != eos else unk_id,\n',
        "the Marian decoder starts from a BOS-like token (<unk>, as 0 is </s>) instead of <pad>",
    ),
    Fault(
        "marian-pad-generated",
        "model/decoding/greedy.py",
        "return torch.tensor([config.pad_id] if config.bos_id == config.pad_id else [], dtype=torch.long, device=device)",
        "return torch.tensor([], dtype=torch.long, device=device)",
        "greedy decoding may choose Marian's <pad>, the start token",
    ),
    Fault(
        "marian-no-forced-eos",
        "model/checkpoints/marian.py",
        "force_eos_at_limit=forced_eos == eos,",
        "force_eos_at_limit=False,",
        "a Marian translation that reaches the limit is not ended with </s>",
    ),
    Fault(
        "decoder-mask-hides-start-pad",
        "model/core/masks.py",
        "    keys[..., 0] = True\n",
        "",
        "the decoder's padding mask hides a start token that is the pad token",
    ),
    # ---- analysis
    Fault(
        "diagnostics-entropy-nats",
        "model/analysis/readouts.py",
        "entropy = -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1)",
        "entropy = -(w * np.log(np.clip(w, 1e-12, None))).sum(-1)",
        "head diagnostics entropy in nats while labelled bits",
    ),
]
