#!/bin/bash
# s32c = s32b with the epilogue's warning fixed (the code to commit: AUTO runs the qkv projection of
# 57-64 rows as the full-K kernel, 8 + 8 slots). The four GPU tests, then --fullk-ab (AUTO against
# the tile GEMM, alternating in one process, three rounds each) on Qwen3-4B at batch 4 and 64 and on
# the other shapes at batch 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32c && tar xJf .carry/s32c/bin.tar.xz -C /tmp/s32c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 /tmp/s32c/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
for s in qwen3-4b qwen3-0.6b qwen3-1.7b qwen3-8b; do
  b=64; [ $s = qwen3-4b ] && b=4,64
  timeout 100 /tmp/s32c/bin/bench_model_cuda --only decode --steps 20 --batches $b --shape $s --fullk-ab > $O/ab_$s.txt 2>&1 || echo "$s rc $?"
  echo "$s: $(grep -E '^(4|64) ' $O/ab_$s.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  grep "^full-K" $O/ab_$s.txt
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
