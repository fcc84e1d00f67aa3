#!/usr/bin/env bash
# The browser tests run RUNS times in a row (default 3) while every core is kept busy: one CPU burner
# (`python3 -c 'while True: pass'`) per core, stopped when the script ends, however it ends. Each run's result and
# time is printed, then all of them; the exit status is the number of runs that failed (0: all green).
#   bash scripts/stress_tests.sh                                   # tests/browser three times, on two workers as CI
#   RUNS=1 WORKERS=0 bash scripts/stress_tests.sh tests/browser/test_browser_compare.py   # one file, once, one process
# RUNS: how many runs; WORKERS: pytest-xdist workers (default 2, CI's; 0 runs in this process); BURNERS: how many
# burners (default one per core, `nproc`). Arguments go to pytest (default tests/browser). docs/testing.md, "Under load".
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
WORKERS=${WORKERS:-2}
BURNERS=${BURNERS:-$(nproc)}
[ $# -gt 0 ] || set -- tests/browser

burners=()
stop_burners() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${burners[@]}"; do wait "$pid" 2>/dev/null; done
  burners=()
}
trap stop_burners EXIT
trap 'exit 130' INT TERM  # through the EXIT trap: the burners stop
for _ in $(seq "$BURNERS"); do
  python3 -c 'while True: pass' &
  burners+=("$!")
done
echo "stress: $BURNERS CPU burners on $(nproc) cores; $RUNS runs of pytest -m \"\" -n $WORKERS $*"

results=()
failed=0
for run in $(seq "$RUNS"); do
  start=$(date +%s)
  if python3 -m pytest -q -m "" -n "$WORKERS" --dist loadfile -p no:cacheprovider "$@"; then
    result=passed
  else
    result=FAILED
    failed=$((failed + 1))
  fi
  line="run $run of $RUNS: $result in $(($(date +%s) - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "stress: $line"
  results+=("$line")
done
echo "stress: $((RUNS - failed)) of $RUNS runs passed"
printf 'stress:   %s\n' "${results[@]}"
exit "$failed"
