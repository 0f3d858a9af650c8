#!/bin/bash
# session 13 run 4: session 12's dropped add + RMSNorm in the o/down tile GEMM's last CTA, again on top of evict_first weights
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/bench_fusenorm --only decode --batches 2,4 --fuse-norm-ab > $O/fuse_norm_ab.txt 2>&1; echo "rc $?"
grep -E "^add \+ RMSNorm|^(2|4) " $O/fuse_norm_ab.txt
