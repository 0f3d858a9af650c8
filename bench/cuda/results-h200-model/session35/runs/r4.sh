#!/bin/bash
# Run 4: `s35d` = `s35c` with the unit cost of the cut a knob (bench_model_cuda --attn-balance N:
# 1 by count as before, 0 AUTO = 2 tiles a unit, N tiles a unit) and --context-spread LO (row b of a
# batch at LO + (context - LO) b / (B - 1)). Batch 64 at contexts 128-2560 (a serving batch's spread)
# for each setting, separate processes, two rounds; batch 64 at context 512 (uniform) for 1, 0 and 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35d && tar xJf .carry/s35d/bin.tar.xz -C /tmp/s35d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35d/bin O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
run() { # name args...
  local n=$1; shift
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do for bal in 1 0 4 8 16 32; do run spread.bal$bal.$r --context 2560 --context-spread 128 --attn-balance $bal; done; done
for bal in 1 0 8; do run c512.bal$bal --attn-balance $bal; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
