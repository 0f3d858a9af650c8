#!/bin/bash
# session 20 run 4: the committed code (session 19's final build, no change): the decode
# attention's context splits swept in the step (--attn-split-sweep) at batches 2-8, twice,
# to see whether the split heuristic still picks the fastest count since the fused rope.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
mkdir -p /tmp/s20e && tar xJf .carry/s20e/bin.tar.xz -C /tmp/s20e; B=/tmp/s20e/bin
for k in 1 2; do
  timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8 --attn-split-sweep > $O/sweep_$k.txt 2>&1 || echo "sweep $k rc $?"
done
for b in 2 4 8; do for k in 1 2; do
  echo "B$b ($k): $(grep -E "^attention split sweep: batch $b," $O/sweep_$k.txt | sed -E 's/.*splits ([0-9]+)( \(heuristic\))?: step ([0-9.]+) ms/\1=\3/' | tr '\n' ' ')"
done; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
