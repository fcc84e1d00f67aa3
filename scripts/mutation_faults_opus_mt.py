"""The planted faults of scripts/mutation_check.py in decoding and scoring an OPUS-MT (Marian) checkpoint: the
beam search's rules for it (tests/model/decoding/test_beam_marian.py), scripts/score_checkpoint.py
(tests/project/test_score_checkpoint.py) and the benchmark's random OPUS-MT folder
(tests/project/test_benchmarks.py). Run after MODEL_FAULTS (scripts/mutation_faults.py), before VIEW_FAULTS. One
exact text replacement each; `old` must occur exactly once in `file` (`python3 scripts/mutation_check.py --stale`).
"""

from __future__ import annotations

from scripts.mutation_faults import Fault

OPUS_MT_FAULTS = [
    Fault(
        "beam-marian-limit-not-forced",
        "model/decoding/beam.py",
        "log_probs = torch.where(at_limit.repeat_interleave(K)[:, None], only_eos, log_probs)",
        "log_probs = log_probs",
        "beam search ignores forced_eos_token_id: beams at the length limit are left unfinished",
    ),
    Fault(
        "beam-marian-forced-eos-free",
        "model/decoding/beam.py",
        "only_eos[:, config.eos_id] = log_probs[:, config.eos_id]",
        "only_eos[:, config.eos_id] = 0.0",
        "the forced </s> adds log P = 0 (transformers' convention) instead of the model's own log P",
    ),
    Fault(
        "beam-marian-pad-generated",
        "model/decoding/beam.py",
        'log_probs = log_probs.index_fill(1, never_generated(config, device), float("-inf"))',
        "log_probs = log_probs",
        "beam search may generate Marian's <pad> start token",
    ),
    Fault(
        "score-batch-limit-not-forced",
        "model/training/evaluate.py",
        "        ids[-1] = config.eos_id\n",
        "        pass\n",
        "batched greedy scoring lets a short sentence run past its own forced </s> (the batch's longer budget)",
    ),
    Fault(
        "score-references-from-the-source-side",
        "scripts/score_checkpoint.py",
        "_, references = read_split(data_dir, split, target_language)",
        "_, references = read_split(data_dir, split, source_language)",
        "the scorer compares translations with the source lines",
    ),
    Fault(
        "score-beam-as-greedy",
        "scripts/score_checkpoint.py",
        'DECODINGS = {"greedy": 1, "beam4": 4}',
        'DECODINGS = {"greedy": 1, "beam4": 1}',
        "the scorer's beam 4 decodes greedily",
    ),
    Fault(
        "opus-mt-folder-ends",
        "benchmarks/opus_mt_folder.py",
        "    if not ends:\n",
        "    if ends:\n",
        "the benchmark's random OPUS-MT folder ends its outputs early (its budget row would not reach the limit)",
    ),
]
