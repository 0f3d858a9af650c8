#!/bin/bash
# Run 8: `s35f`, the decode attention's context splits at batch 64 with units taken every grid-th:
# the heuristic (1 here) against 2 and 3, at context 512 and at contexts 128-2560; one round.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35f && tar xJf .carry/s35f/bin.tar.xz -C /tmp/s35f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35f/bin O=/tmp/o8; mkdir -p $O
run() { local n=$1; shift
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for s in 0 2 3; do run c512.s$s --attn-splits $s; run spread.s$s --context 2560 --context-spread 128 --attn-splits $s; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
