#!/bin/bash
# session 27 run 2 (run 1 hung with unbounded pacing waits, output lost to buffering): a weight streamer beside the projection chain (bench/cuda/exp_l2_stream.cu),
# 36 layers x 4 projections at 64 and 32 rows; the tile kernel's resources.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 90 .carry/s27a/exp_l2_stream 64 > $O/m64.txt 2>&1 || echo "m64 rc $?"
timeout 60 .carry/s27a/exp_l2_stream 32 > $O/m32.txt 2>&1 || echo "m32 rc $?"
cat $O/m64.txt; grep round $O/m32.txt
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
