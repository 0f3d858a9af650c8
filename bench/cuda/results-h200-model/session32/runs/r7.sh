#!/bin/bash
# Why Qwen3-8B's batch 64 loses 1.2% with the full-K qkv (run 6): stamped steps, AUTO against
# --fullk 1, on s32b's diagnostic build (the same kernels as s32c).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32b && tar xJf .carry/s32b/bin.tar.xz -C /tmp/s32b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
for f in 0 1; do
  timeout 90 /tmp/s32b/bin/bench_diag --only decode --steps 4 --batches 64 --shape qwen3-8b --fullk $f --diag-stamps $O/stamps8_fk$f.txt > $O/diag8_fk$f.txt 2>&1 || echo "diag $f rc $?"
done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
