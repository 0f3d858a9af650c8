#!/bin/bash
# Session 31, run 9: the committed default (a third of the fused MLP's ring before its PDL wait)
# against the whole ring on the other shapes' forms, batch 64, separate processes, two rounds:
# qwen3-0.6b (12 slots: 4 against 12), qwen3-1.7b (8: 2 against 8), qwen3-8b (6: 2 against 6).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s31e && tar xJf .carry/s31e/bin.tar.xz -C /tmp/s31e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
run() { # name args...
  local n=$1; shift
  timeout 60 /tmp/s31e/bin/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^64 ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run 06.$r --shape qwen3-0.6b; run 06w.$r --shape qwen3-0.6b --mlp-pre 12
  run 17.$r --shape qwen3-1.7b; run 17w.$r --shape qwen3-1.7b --mlp-pre 8
  run 8.$r --shape qwen3-8b; run 8w.$r --shape qwen3-8b --mlp-pre 6
done
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
