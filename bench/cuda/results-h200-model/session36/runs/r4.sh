#!/bin/bash
# Run 4: the committed code (`s35g`). At batch 4 the tile GEMM's K-split knobs now reach the qkv
# projection only (o and down take the k-sliced tiles, gate/up and the LM head one split anyway):
# --tile-sweep and --attn-split-sweep at batch 4, two processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do
  timeout 120 $B/bench_model_cuda --only decode --steps 20 --batches 4 --tile-sweep --attn-split-sweep > $O/sweep.$r.txt 2>&1 || echo "sweep.$r rc $?"
  grep -E "sweep|^4 " $O/sweep.$r.txt
done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
