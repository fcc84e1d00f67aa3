#!/usr/bin/env bash
# The GPU training recipe for the shipped checkpoint, for one H100 in <= 10 minutes.
# Not yet run on a GPU (no GPU was lent to the sessions that wrote it); the same command path ran on
# the CPU with the tiny settings below. Usage, from anywhere, with the data copied into ./data
# (git-ignored; `cp -r ../shared/data/multi30k ../shared/data/tatoeba data/`):
#   bash scripts/train_gpu.sh [OUT_DIR]
# then score it:
#   python3 scripts/score_checkpoint.py --checkpoint OUT_DIR/best --data data/multi30k
#
# Every setting can be overridden from the environment (same names as below). The CPU smoke test of
# this exact command path (about a minute; what the GPU run must not be the first to try):
#   DATA=../shared/data D_MODEL=32 HEADS=4 LAYERS=1 D_FF=64 VOCAB=2000 MAX_TOKENS=2000 WARMUP=20 \
#   EVAL_EVERY=10 EVAL_MINUTES=0 BLEU_SENTENCES=20 AVERAGE_LAST=2 MAX_MINUTES=0 MAX_STEPS=20 THREADS=1 \
#     bash scripts/train_gpu.sh /tmp/train-gpu-smoke
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu}
DATA=${DATA:-data}
D_MODEL=${D_MODEL:-256} HEADS=${HEADS:-8} LAYERS=${LAYERS:-6} D_FF=${D_FF:-1024}
DROPOUT=${DROPOUT:-0.2} ATTENTION_DROPOUT=${ATTENTION_DROPOUT:-0.1} VOCAB=${VOCAB:-10000}
MAX_TOKENS=${MAX_TOKENS:-48000} WARMUP=${WARMUP:-800} LR_FACTOR=${LR_FACTOR:-1.0}
# validate (val BLEU, a film frame, best/ kept) every EVAL_MINUTES of training time, whatever the speed
EVAL_EVERY=${EVAL_EVERY:-1000000} EVAL_MINUTES=${EVAL_MINUTES:-0.5} BLEU_SENTENCES=${BLEU_SENTENCES:-1014}
AVERAGE_LAST=${AVERAGE_LAST:-5} SEED=${SEED:-1234}
# training time, evaluations not counted (they add about 5 s each on an H100)
MAX_MINUTES=${MAX_MINUTES:-8.5} MAX_STEPS=${MAX_STEPS:-0} THREADS=${THREADS:-0}
PRECISION=${PRECISION:-auto}  # bf16 on an H100; float32 on a CPU without native bf16 (model/training/precision.py)
COMPILE=${COMPILE:-auto}      # torch.compile on CUDA only
python3 -m model.training.train \
  --data "$DATA/multi30k/train" "$DATA/tatoeba/eng-deu.large.tsv" --val "$DATA/multi30k/val" --out "$OUT" \
  --d-model "$D_MODEL" --heads "$HEADS" --encoder-layers "$LAYERS" --decoder-layers "$LAYERS" --d-ff "$D_FF" \
  --dropout "$DROPOUT" --attention-dropout "$ATTENTION_DROPOUT" --vocab-size "$VOCAB" \
  --max-tokens "$MAX_TOKENS" --warmup "$WARMUP" --lr-factor "$LR_FACTOR" \
  --eval-every "$EVAL_EVERY" --eval-minutes "$EVAL_MINUTES" --seed "$SEED" --bleu-sentences "$BLEU_SENTENCES" --average-last "$AVERAGE_LAST" \
  --max-minutes "$MAX_MINUTES" --max-steps "$MAX_STEPS" --threads "$THREADS" \
  --precision "$PRECISION" --compile "$COMPILE"
echo "best checkpoint: $OUT/best ($(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(m['selected'], 'at step', m['step'], 'val', m['validation'])" "$OUT/best/metrics.json"))"
echo "training log:    $OUT/training_log.json (and $OUT/best/training_log.json)"
echo "training film:   $OUT/film.npz ($(du -h "$OUT/film.npz" | cut -f1))"
