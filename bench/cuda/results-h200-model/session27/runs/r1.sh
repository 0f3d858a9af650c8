#!/bin/bash
# session 27 run 1: a weight streamer beside the projection chain (bench/cuda/exp_l2_stream.cu),
# 36 layers x 4 projections at 64 and 32 rows; the tile kernel's resources.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
cuobjdump -res-usage .carry/s27a/exp_l2_stream 2>&1 | grep -A1 -E "gemm_tile_kernel|streamer" | grep -oE "Function [^ ]*|REG:[0-9]+|SHARED:[0-9]+" | paste - - - | cut -c1-160 > $O/res.txt 2>&1
timeout 200 .carry/s27a/exp_l2_stream 64 > $O/m64.txt 2>&1 || echo "m64 rc $?"
timeout 150 .carry/s27a/exp_l2_stream 32 > $O/m32.txt 2>&1 || echo "m32 rc $?"
cat $O/res.txt | head -12; cat $O/m64.txt; grep round $O/m32.txt
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
