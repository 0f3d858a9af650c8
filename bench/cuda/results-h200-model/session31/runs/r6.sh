#!/bin/bash
# Session 31, run 6: the committed form again on another card: s30h, s31e (2 of 6 stages before
# the wait), s31e --mlp-pre 3 / 4 / 6 (6 = s30h's whole ring), four rounds, separate processes,
# batches 4 and 64.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31e; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2 3; do
  run base.$r s30h
  run e.$r s31e
  run e3.$r s31e --mlp-pre 3
  run e4.$r s31e --mlp-pre 4
  run e6.$r s31e --mlp-pre 6
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
