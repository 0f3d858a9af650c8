#!/bin/bash
# session 25 run 3: which of batch 8's settings make its step faster than batch 4's (run 1:
# 2.59-2.61 against 2.63 ms on one card). Separate processes, two rounds (the second reversed).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25c && tar xJf .carry/s25c/bin.tar.xz -C /tmp/s25c; B=/tmp/s25c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=("--batches 4" "--batches 8" "--batches 8 --kslice 1" "--batches 8 --attn-splits 8" "--batches 4 --attn-warps 8" "--batches 4 --kslice 2 --attn-splits 4" "--batches 5" "--batches 6")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
