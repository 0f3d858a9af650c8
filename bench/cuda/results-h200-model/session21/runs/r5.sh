#!/bin/bash
# session 21 run 5: (a) does an L2 prefetch give L2 hits at all? exp_l2_prefetch --own-prefetch
# with 50 us bubbles (long enough for every prefetched byte to land) beside the 8 us one;
# (b) past 16 rows, every tile GEMM asking L2 for k tiles past its ring before its PDL wait
# (--l2-ahead-ab: 2 / 4 / all lines, 4 by bulk requests), batches 64 and 32.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
mkdir -p /tmp/s21e && tar xJf .carry/s21e/bin.tar.xz -C /tmp/s21e; B=/tmp/s21e
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/exp_l2_prefetch --own-prefetch > $O/own.txt 2>&1 || echo "own rc $?"
timeout 280 $B/bench_model_cuda --only decode --batches 64,32 --l2-ahead-ab 2 --l2-ahead-ab 4 --l2-ahead-ab 0xffff \
  --l2-ahead-ab 0x10004 > $O/l2.txt 2>&1 || echo "l2 rc $?"
cat $O/gpu.txt
grep -E "bubble.*GEMM after|check: asking" $O/own.txt
grep -E "round|^[0-9]+ +[0-9]+ " $O/l2.txt
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
