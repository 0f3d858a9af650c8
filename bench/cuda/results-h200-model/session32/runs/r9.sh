#!/bin/bash
# Prepared, not run (the device time ran out): s32e = the committed code. Ring 0 at 48 columns is
# run 8's best (11 + 6 slots); at 32 and 64 columns the same split of ~113 KiB (16 + 6, 9 + 5), and
# 64-column test shapes, never yet on a GPU. test_cuda_backend and test_cuda_model, then batch 64
# with and without --fullk 1 on Qwen3-4B and -1.7B (32 columns), two rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32e && tar xJf .carry/s32e/bin.tar.xz -C /tmp/s32e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s32e/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
run() { # name args...
  local n=$1; shift
  timeout 40 /tmp/s32e/bin/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^64 ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  for s in qwen3-4b qwen3-1.7b; do run $s.tile.$r --shape $s; run $s.full.$r --shape $s --fullk 1; done
done
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
