#!/bin/bash
# session 21 run 8: warm-up CTAs in the decode attention: the attention's grid gets N more CTAs
# that read the o projection's weights (learned from the step before) into L2 by 16 KiB bulk
# copies into their shared memory while the attention runs (runs 6-7: real reads by other SMs
# gave the GEMM after a bubble 8.1 us against 9.7 cold and 7.6 warm). --attn-warm-ab N, N = 32,
# 64, 96, batches 4, 2, 8, 16.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
mkdir -p /tmp/s21h && tar xJf .carry/s21h/bin.tar.xz -C /tmp/s21h; B=/tmp/s21h
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 280 $B/bench_model_cuda --only decode --batches 4,2,8,16 --attn-warm-ab 32 --attn-warm-ab 64 --attn-warm-ab 96 > $O/warm.txt 2>&1 || echo "warm rc $?"
cat $O/gpu.txt
grep -E "round|^[0-9]+ +[0-9]+ |error|fail" $O/warm.txt
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
