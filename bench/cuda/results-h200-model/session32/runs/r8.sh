#!/bin/bash
# s32d = the code to commit (the full-K kernel opt-in: --fullk 1 from 57 rows) with rings 2-4 that
# split ~115 KiB between weight and x slots at 48 columns (run 4's 8 + 8 slots: qkv 12.8 us, ~2.5 us
# for a weight stage, ~1.3 for an x stage, so ~2 weight slots per x slot should stream faster):
# ring 2 11 + 6, ring 3 10 + 7, ring 4 13 + 5. test_cuda_backend first (the final code), then batch
# 64 in separate processes, three rounds on Qwen3-4B, two on Qwen3-8B.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32d && tar xJf .carry/s32d/bin.tar.xz -C /tmp/s32d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
timeout 120 /tmp/s32d/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m8 FAIL $O/test_cuda_backend.txt
run() { # name args...
  local n=$1; shift
  timeout 40 /tmp/s32d/bin/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^64 ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run tile.$r; run r0.$r --fullk 1; run r2.$r --fullk 1 --fullk-ring 2; run r3.$r --fullk 1 --fullk-ring 3; run r4.$r --fullk 1 --fullk-ring 4
done
for r in 0 1; do
  run 8tile.$r --shape qwen3-8b; run 8r2.$r --shape qwen3-8b --fullk 1 --fullk-ring 2
done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
