#!/bin/bash
# Run 8: `s34e` = the committed code + bench flag --attn-early N. Run 7's in-process rounds put
# the attention's old keys before the PDL wait (the default) ~1% behind reading them after it at
# batch 4 (where, without the early reads, AUTO takes 8-warp CTAs) and ~1.2% ahead at batch 64.
# Separate processes, three rounds, batches 1, 4, 8, 16 and 64: the default; --attn-early 1
# (after the wait, AUTO width); --attn-early 1 --attn-warps 4; --attn-warps 8 (early, 8 warps).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34e && tar xJf .carry/s34e/bin.tar.xz -C /tmp/s34e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34e/bin O=/tmp/o8; mkdir -p $O
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r 1,4,8,16,64; run late.$r 1,4,8,16,64 --attn-early 1; run late4.$r 1,4,8,16,64 --attn-early 1 --attn-warps 4
  run early8.$r 1,4,8,16 --attn-warps 8
done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
