#!/bin/bash
# session 12 run 12: the new default (one CTA per SM past 16 rows) against two CTAs per SM forced (the split before), interleaved
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/bench_model_cuda --only decode --batches 20,32 --tile-ctas-ab --steps 12 > $O/ctas_ab2.txt 2>&1; echo "rc $?"
grep -E "^tile GEMM split|^(20|32) " $O/ctas_ab2.txt
