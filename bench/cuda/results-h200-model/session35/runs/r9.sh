#!/bin/bash
# Run 9: `s35f` on the other shapes at batch 64 (context 512): units every grid-th (AUTO) against
# runs (--attn-order 1), Qwen3-8B and Qwen3-1.7B, one round each.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35f && tar xJf .carry/s35f/bin.tar.xz -C /tmp/s35f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35f/bin O=/tmp/o9; mkdir -p $O
run() { local n=$1; shift
  timeout 70 $B/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for s in qwen3-8b qwen3-1.7b; do for o in 0 1; do run $s.ord$o --shape $s --attn-order $o; done; done
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
