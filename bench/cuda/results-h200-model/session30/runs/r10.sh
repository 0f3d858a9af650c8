#!/bin/bash
# Session 30, run 10: s30f (run 6's build: wide o, and the knobs since dropped) at batch 64,
# separate processes, two rounds: AUTO (wide o, 168 KiB); --wide-form 1 (wide o, 124 KiB);
# --wide-form 1 --wide-flush 1 (o and qkv wide in 124 KiB CTAs, beside which one decode-attention
# CTA fits, qkv's partials summed by a kernel).
cd "$(dirname "$0")/../../../../.."
for v in s30f; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o10; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
run() { # name binary args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run auto.$r s30f
  run o124.$r s30f --wide-form 1
  run both124.$r s30f --wide-form 1 --wide-flush 1
done
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
