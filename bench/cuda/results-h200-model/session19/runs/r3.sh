#!/bin/bash
# session 19 run 3: where the fused rope loses (run 2: batch 16 2-3% slower, batch 1, 4 and 64
# 0.3-0.5% faster): --rope-ab at batches 2-48, one process each.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19b && tar xJf .carry/s19b/bin.tar.xz -C /tmp/s19b; B=/tmp/s19b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
for b in 2 8 12 16 24 32 48; do
  timeout 120 $B/bench_model_cuda --only decode --batches $b --rope-ab > $O/ab_$b.txt 2>&1 || echo "ab $b rc $?"
  echo "B$b: $(grep -E 'RoPE \+ K/V append' $O/ab_$b.txt | awk '{k = ($0 ~ /rope kernel/) ? "K" : "F"; printf "%s %s | ", k, $(NF-1)}')"
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
