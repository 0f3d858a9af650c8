#!/bin/bash
# session 11 run 1: the tile GEMM's K splits past 16 rows rounded up / 2 CTAs per SM / default, interleaved, batches 32, 48, 64
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 400 stdbuf -oL $B/bench_model_cuda --only decode --batches 32,48,64 --steps 15 --tile-round-ab > $O/run1_round.txt 2>&1; echo "bench rc $?"
grep -E "^tile splits|^(32|48|64) |^device" $O/run1_round.txt | cut -c1-110
