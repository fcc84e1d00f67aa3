#!/usr/bin/env bash
# The GPU training recipe for the shipped checkpoint (issue 3), for one H100 in <= 10 minutes.
# Not yet run on a GPU (no GPU was lent to the session that wrote it): the same command ran on the
# CPU with a tiny config. Usage, from the repository root, with the data copied into ./data
# (git-ignored; `cp -r ../shared/data/multi30k ../shared/data/tatoeba data/`):
#   bash scripts/train_gpu.sh [OUT_DIR]
# then score it:
#   python3 scripts/score_checkpoint.py --checkpoint OUT_DIR/best --data data/multi30k
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/gpu}
python3 -m model.train \
  --data data/multi30k/train data/tatoeba/eng-deu.tsv --val data/multi30k/val --out "$OUT" \
  --d-model 256 --heads 8 --encoder-layers 6 --decoder-layers 6 --d-ff 1024 \
  --dropout 0.2 --attention-dropout 0.1 --vocab-size 10000 \
  --max-tokens 48000 --warmup 800 --lr-factor 1.0 \
  --eval-every 400 --bleu-sentences 1014 --average-last 5 \
  --max-minutes 9 --precision bf16 --compile on
