#!/bin/bash
# Prepared, not run (the device time ran out): s32f = the committed code, with
# - the full-K qkv's final ring-0 forms at 32 and 64 columns (16 + 6, 9 + 5 slots) and 64-column
#   test shapes, never yet on a GPU;
# - a new hook, --tile-alone N: past N rows a one-wave tile GEMM asks for 114 KiB, so its CTAs run
#   one per SM. Run 4's stamps put Qwen3-4B's 96 qkv tile CTAs on ~74 SMs, 22 shared, while
#   Qwen3-8B's spread on ~95 (run 7); the full-K kernel's gain at Qwen3-4B is that placement. If
#   --tile-alone 56 gives Qwen3-4B the same without costing Qwen3-8B, it is a general default.
# Tests first, then batch 64 in separate processes (three rounds), batches 32 and 48 with
# --tile-alone 16 (o, qkv and down are one wave there), and a stamped Qwen3-4B step.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32f && tar xJf .carry/s32f/bin.tar.xz -C /tmp/s32f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/on; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s32f/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 /tmp/s32f/bin/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run 4b.base.$r 64; run 4b.alone.$r 64 --tile-alone 56; run 4b.fullk.$r 64 --fullk 1
  run 8b.base.$r 64 --shape qwen3-8b; run 8b.alone.$r 64 --shape qwen3-8b --tile-alone 56
  run 17.base.$r 64 --shape qwen3-1.7b; run 17.alone.$r 64 --shape qwen3-1.7b --tile-alone 56; run 17.fullk.$r 64 --shape qwen3-1.7b --fullk 1
done
for r in 0 1; do run mid.base.$r 32,48; run mid.alone.$r 32,48 --tile-alone 16; done
timeout 60 /tmp/s32f/bin/bench_diag --only decode --steps 4 --batches 64 --tile-alone 56 --diag-stamps $O/stamps_alone.txt > $O/diag_alone.txt 2>&1 || echo "diag rc $?"
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
