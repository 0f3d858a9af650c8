#!/bin/bash
# session 13 run 7: the tile GEMM's K split by default against at most 8 splits (--tile-max8-ab), batches 2-16, three interleaved rounds
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 280 $B/bench_model_cuda --only decode --batches 2,3,4,6,8,12,16 --tile-max8-ab > $O/max8_ab.txt 2>&1; echo "rc $?"
grep -E "^tile GEMM split|^[0-9]+ " $O/max8_ab.txt
