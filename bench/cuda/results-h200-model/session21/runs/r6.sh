#!/bin/bash
# session 21 run 6: do weights that other SMs really read (not prefetched) come back as L2
# hits? exp_l2_prefetch --own-prefetch with a new variant: the bubble reads the GEMM's weights
# by 8 KiB bulk copies into scratch shared memory (discarded), within its 8, 20 or 50 us.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o6; mkdir -p $O
mkdir -p /tmp/s21f && tar xJf .carry/s21f/bin.tar.xz -C /tmp/s21f; B=/tmp/s21f
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/exp_l2_prefetch --own-prefetch > $O/own.txt 2>&1 || echo "own rc $?"
cat $O/gpu.txt
grep -E "bubble.*GEMM after|check: asking" $O/own.txt
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
