#!/bin/bash
# session 13 run 6: with evict_first weights, the tile GEMM split sweep and the attention split sweep again
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 280 $B/bench_model_cuda --only decode --batches 2,4,16,64 --tile-sweep --attn-split-sweep > $O/sweeps.txt 2>&1; echo "rc $?"
grep -E "sweep|^(2|4|16|64) " $O/sweeps.txt
