#!/bin/bash
# session 21 run 10: the committed exp_l2_prefetch --bubble-prefetch (the committed library):
# the GEMM after a bubble that brings its weights into L2 by bulk prefetch, line prefetch or
# real reads, against cold and warm; six bubbles (8 us of 196 / 100 / 32 KiB, 3 us, 20 us, 50 us).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o10; mkdir -p $O
mkdir -p /tmp/s21y && tar xJf .carry/s21y/bin.tar.xz -C /tmp/s21y; B=/tmp/s21y
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/exp_l2_prefetch --bubble-prefetch > $O/pf.txt 2>&1 || echo "pf rc $?"
cat $O/gpu.txt
grep -E "bubble.*GEMM after" $O/pf.txt
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
