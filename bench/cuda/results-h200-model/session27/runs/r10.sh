#!/bin/bash
# session 27 run 10: the projections' weights stored tile-major (each TMA weight stage one contiguous
# 16 KiB block; pl_cuda_gemv_ws.tile_wt, patches/run10_*.patch) against row-major, chains of 36 x 4
# projections (exp_tiled_weights, a copy of exp_l2_stream.cu) at 64, 32, 16 and 4 rows, 3 rounds.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o10; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for m in 64 32 16 4; do
  timeout 60 .carry/s27g/exp_tiled_weights $m 3 > $O/m$m.txt 2>&1 || echo "m$m rc $?"
  echo "== $m rows"; grep -E "check|round" $O/m$m.txt | sed 's/  (pacing.*//'
done
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
