#!/bin/bash
# session 21 run 7: the tile GEMM warming L2 by real reads (bit 18 of tile_l2_ahead: bulk
# copies of its k tiles past the ring, and of the CTA half a grid later, into the x slots'
# unused rows, before its PDL wait). (a) exp_l2_prefetch --own-prefetch (o and qkv after
# bubbles); (b) the o projection after the decode attention in the step (--after-attn-ab),
# batches 2, 4, 8; (c) test_cuda_backend (the default path: nothing changes there).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
mkdir -p /tmp/s21g && tar xJf .carry/s21g/bin.tar.xz -C /tmp/s21g; B=/tmp/s21g
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/exp_l2_prefetch --own-prefetch > $O/own.txt 2>&1 || echo "own rc $?"
timeout 200 $B/bench_model_cuda --only decode --batches 4,2,8 --after-attn-ab 0x4ffff:0 --after-attn-ab 0x6ffff:0 \
  --after-attn-ab 0x4ffff:1 > $O/aa.txt 2>&1 || echo "aa rc $?"
timeout 60 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?"; tail -2 $O/test_cuda_backend.log
cat $O/gpu.txt
grep -E "bubble.*GEMM after|check: asking" $O/own.txt
grep -E "round|^[0-9]+ +[0-9]+ " $O/aa.txt
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
