#!/usr/bin/env bash
# The CPU recipe of the shipped checkpoint: Multi30k train (listed twice: its captions keep
# their share of the data next to 177k everyday pairs) + the large Tatoeba set minus a held-out slice;
# model selection on Multi30k val and that slice together; one thread by default (THREADS=2 on an idle machine: two OpenMP threads collapse to a crawl as soon as anything else runs on a 2-core CPU), --precision auto, the film on.
#   bash scripts/train_cpu.sh [RUN_DIR] [MINUTES]      (add --resume to continue an interrupted run, or
#   --init-from CHECKPOINT_DIR to continue a checkpoint, e.g. checkpoints/de-en-small, in a new RUN_DIR)
# MULTI30K_COPIES=N lists Multi30k train N times (default 2); the shipped run of 2026-11-24 trained 113 minutes
# with 2 and was resumed with 4 (docs/training/2026-11-24-cpu-large/README.md).
set -euo pipefail
RUN=${1:-runs/cpu-large}
MINUTES=${2:-90}
shift $(( $# > 2 ? 2 : $# )) || true
DATA=${DATA:-../shared/data}
[ -f data/tatoeba/holdout.tsv ] || python3 -m scripts.split_holdout "$DATA/tatoeba/eng-deu.large.tsv" --out data/tatoeba --size 3000
MULTI30K=()
for _ in $(seq "${MULTI30K_COPIES:-2}"); do MULTI30K+=("$DATA/multi30k/train"); done
python3 -m model.training.train \
  --data "${MULTI30K[@]}" data/tatoeba/train.tsv \
  --val "$DATA/multi30k/val" data/tatoeba/holdout.tsv \
  --out "$RUN" --d-model 256 --heads 8 --encoder-layers 3 --decoder-layers 3 --d-ff 1024 --vocab-size 8000 \
  --dropout 0.1 --attention-dropout 0.1 --max-tokens 4000 --warmup 600 --lr-factor 0.5 \
  --eval-minutes 7.5 --bleu-sentences 150 --average-last 3 --max-minutes "$MINUTES" --threads "${THREADS:-1}" \
  --precision auto --film on "$@"
