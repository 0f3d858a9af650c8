#!/bin/bash
# session 25 run 1: why batch 4 with k-sliced o/down tiles is slower than batch 8 with them.
# Separate processes, two interleaved rounds: batch 4 with {heuristic, 4} attention splits x
# {AUTO (tile kernel), k-sliced (knob 2)}, and batch 8 (AUTO: k-sliced) as the reference.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25a && tar xJf .carry/s25a/bin.tar.xz -C /tmp/s25a; B=/tmp/s25a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=("--batches 4" "--batches 4 --kslice 2" "--batches 4 --attn-splits 4" "--batches 4 --attn-splits 4 --kslice 2" "--batches 4 --attn-splits 6 --kslice 2" "--batches 8")
for r in 0 1; do for i in 0 1 2 3 4 5; do k=$(( r ? 5 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
