#!/usr/bin/env bash
# The GPU pipeline: two runs of scripts/train_gpu.sh one after the other (the
# recipe, then a second seed with a gentler learning rate), each scored on val and test_2016 (greedy
# and beam 4) by scripts/score_checkpoint.py as soon as it ends. The shipped checkpoint is the run with
# the better mean val BLEU (model selection on val only). Started in the background on the device
# machine (it outlives one 10-minute command); each run leaves RUNS/NAME.log, RUNS/NAME/ and a
# RUNS/NAME/scored marker:
#   DATA=data RUNS=runs GIT_COMMIT=<sha> setsid nohup bash scripts/gpu_pipeline.sh > runs/pipeline.log 2>&1 &
set -uo pipefail
cd "$(dirname "$0")/.."
export DATA=${DATA:-data}
RUNS=${RUNS:-runs}
export GIT_COMMIT=${GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
mkdir -p "$RUNS"

score() {  # RUN_DIR: greedy + beam 4 on val and test_2016, both directions, into RUN_DIR/best/metrics.json
  python3 scripts/score_checkpoint.py --checkpoint "$1/best" --data "$DATA/multi30k" > "$1/scores.txt" 2>&1
  touch "$1/scored"
}

echo "run a: the recipe"
bash scripts/train_gpu.sh "$RUNS/gpu-a" > "$RUNS/gpu-a.log" 2>&1
score "$RUNS/gpu-a" &
echo "run b: seed 2, learning-rate factor 0.7, warm-up 1000"
SEED=2 LR_FACTOR=0.7 WARMUP=1000 MAX_MINUTES=${MAX_MINUTES_B:-8} \
  bash scripts/train_gpu.sh "$RUNS/gpu-b" > "$RUNS/gpu-b.log" 2>&1
score "$RUNS/gpu-b"
wait
echo "pipeline done"
