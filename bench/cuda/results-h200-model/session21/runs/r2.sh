#!/bin/bash
# session 21 run 2: the o projection (after the decode attention) at one CTA per SM instead
# of two (--after-attn-ab 0:1), and o and down together (--narrow-ab 1), batches 2-16; each
# A/B its own process (the capped pool holds ~4 A/B rounds of steps per batch).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
mkdir -p /tmp/s21b && tar xJf .carry/s21b/bin.tar.xz -C /tmp/s21b; B=/tmp/s21b
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8,16 --after-attn-ab 0:1 > $O/aa.txt 2>&1 || echo "aa rc $?"
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8,16 --narrow-ab 1 > $O/narrow.txt 2>&1 || echo "narrow rc $?"
cat $O/gpu.txt
for f in aa narrow; do grep -E "round|^[0-9]+ +[0-9]+ " $O/$f.txt | sed -E 's/GEMM after the attention \(L2 0x0, 1 CTAs\/SM\)/o 1 CTA\/SM/'; done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
