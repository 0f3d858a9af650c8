#!/bin/bash
# session 11 run 3: the untiled tensor-core GEMM where it needs no K split and one wave (qkv at 1-8 rows), against the default, interleaved
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 250 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,2,4,8 --steps 15 --gemv-wave-ab > $O/run3_wave.txt 2>&1; echo "bench rc $?"
grep -E "^gemv wave|^(1|2|4|8) |^device" $O/run3_wave.txt | cut -c1-110
