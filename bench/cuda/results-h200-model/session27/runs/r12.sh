#!/bin/bash
# session 27 run 12: the tile kernel with 256 weight rows per CTA past 16 tokens (two m64 wgmma
# blocks per warpgroup, 3 stages of 40 KiB; pl_cuda_gemv_ws.tile_rows, patches/run12_*.patch)
# against the 128-row tiles, chains of 36 x 4 projections (exp_tile256) at 64, 48 and 32 rows, 3 rounds.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o12; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for m in 64 48 32; do
  timeout 50 .carry/s27g/exp_tile256 $m 3 > $O/m$m.txt 2>&1 || echo "m$m rc $?"
  echo "== $m rows"; grep -E "check|round" $O/m$m.txt | sed 's/  (pacing.*//'
done
tar czf ${OUT:-/tmp}/r12.tgz -C $O .
