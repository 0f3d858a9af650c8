#!/bin/bash
# session 21 run 1: who asks L2 for a projection's weights while a latency-bound kernel runs.
# (a) exp_l2_prefetch --own-prefetch: o and qkv (M = 4) after attention-sized bubbles: cold,
#     warm, the bubble asking (bulk / per line / plain loads), the GEMM's own early CTAs asking
#     for their k tiles past the ring before the PDL wait (per line, + a later CTA's share,
#     1 CTA/SM per line / bulk), 1 CTA/SM alone.
# (b) bench_model_cuda --after-attn-ab: the same for the o projection in the decode step.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
mkdir -p /tmp/s21a && tar xJf .carry/s21a/bin.tar.xz -C /tmp/s21a; B=/tmp/s21a
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/exp_l2_prefetch --own-prefetch > $O/own.txt 2>&1 || echo "own rc $?"
timeout 300 $B/bench_model_cuda --only decode --batches 2,4,8 --after-attn-ab 0xffff:1 --after-attn-ab 0x2ffff:0 \
   --after-attn-ab 0:1 --after-attn-ab 0x1ffff:1 --after-attn-ab 0xffff:0 > $O/aa.txt 2>&1 || echo "aa rc $?"
cat $O/gpu.txt
grep -E "bubble|check" $O/own.txt
grep -E "GEMM after the attention|^batch|x roofline" $O/aa.txt | head -80
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
