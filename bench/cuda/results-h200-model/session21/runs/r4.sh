#!/bin/bash
# session 21 run 4: past 16 rows, K splits per projection class, each against the default in
# three interleaved rounds (--wide-ks-ab 0xGQO: G gate_up, Q qkv, O o and down; 0 = default).
# The LM head at 64 rows (many waves of two CTAs per SM) streams at ~4.0 TB/s, the 64-row
# layer projections (one CTA per SM, gate_up 152 CTAs, qkv 96) at ~2-2.7: more CTAs per SM?
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
mkdir -p /tmp/s21d && tar xJf .carry/s21d/bin.tar.xz -C /tmp/s21d; B=/tmp/s21d
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 280 $B/bench_model_cuda --only decode --batches 64,32 --wide-ks-ab 0x200 --wide-ks-ab 0x300 --wide-ks-ab 0x030 \
  --wide-ks-ab 0x050 --wide-ks-ab 0x008 > $O/ks.txt 2>&1 || echo "ks rc $?"
cat $O/gpu.txt
grep -E "round|^[0-9]+ +[0-9]+ " $O/ks.txt
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
