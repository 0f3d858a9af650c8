#!/bin/bash
# Run 5's in-process rounds drift (the contexts grow): AUTO (full-K qkv) against --fullk 1 (the tile
# GEMM) in separate processes, batch 64, three rounds, on Qwen3-4B, -8B (48-column tiles) and -1.7B
# (32-column tiles). Same binaries as run 5 (s32c).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32c && tar xJf .carry/s32c/bin.tar.xz -C /tmp/s32c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
run() { # name args...
  local n=$1; shift
  timeout 60 /tmp/s32c/bin/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^64 ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  for s in qwen3-4b qwen3-8b qwen3-1.7b; do
    run $s.full.$r --shape $s; run $s.tile.$r --shape $s --fullk 1
  done
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
