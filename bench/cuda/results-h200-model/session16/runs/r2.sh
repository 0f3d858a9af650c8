#!/bin/bash
# session 16 run 2: diagnostics past 16 rows (results wrong, timing real): no wgmma (waits kept), no cluster reduce of the K splits; ablation at batch 64; the decode attention alone at the step's shapes
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s16/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2; do
  for v in base nomma nored; do
    timeout 120 $B/bench_$v --only decode --batches 4,32,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 150 $B/bench_base --only decode --batches 64 --ablate > $O/ablate64.txt 2>&1 || echo "ablate rc $?"
timeout 100 $B/pagellm bench-attention --device cuda --only decode --decode-shapes 64x512,64x640,64x768,4x640,64x8192 --no-check --iters 60 > $O/ba.txt 2>&1 || echo "ba rc $?"
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|32|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep -iE "step|without" $O/ablate64.txt | tail -12
grep -E "^decode" $O/ba.txt | grep -E "decode-mma-paged-p128 " | head
