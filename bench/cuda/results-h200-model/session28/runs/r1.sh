#!/bin/bash
# session 28 run 1: where the tile GEMM's CTAs land past 16 rows. s28a = ccb8582 (base);
# s28b = clusters launched with cudaClusterSchedulingPolicySpread; s28c = 114 KiB tile CTAs past
# 16 rows (one per SM). Batches 4, 16, 32, 64, separate processes, 2 rounds; then a stamped
# batch-64 step of s28b (placement of each launch's CTAs over the SMs).
cd "$(dirname "$0")/../../../../.."
for v in s28a s28b s28c s28bd; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do
  for v in s28a s28b s28c; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,16,32,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s28bd/bin/bench_model_cuda --only decode --steps 4 --batches 64 --diag-stamps $O/stamps_b.txt > $O/diag_b.txt 2>&1 || echo "diag rc $?"
gzip -f $O/stamps_b.txt
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
