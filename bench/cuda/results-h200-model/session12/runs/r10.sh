#!/bin/bash
# session 12 run 10: the tile GEMM's K split at 17-32 rows: default (2 CTAs/SM) against 1 CTA/SM, interleaved, in the step
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 240 $B/bench_model_cuda --only decode --batches 17,24,32 --tile-ctas-ab --steps 12 > $O/ctas_ab.txt 2>&1; echo "rc $?"
grep -E "^tile GEMM split|^(17|24|32) " $O/ctas_ab.txt
