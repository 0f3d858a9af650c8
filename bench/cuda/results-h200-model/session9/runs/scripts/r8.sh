#!/bin/bash
# session 9 run 8: batch 64 with the tile kernel (TMA) to 64 rows and its split sweep, against the default (cuBLAS past 32 rows)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for r in 1 2; do
  timeout 60 stdbuf -oL $B/bench_model_cuda --only decode --batches 48,64 > $O/run8_default_$r.txt 2>&1; echo "default $r rc $?"
  timeout 60 stdbuf -oL $B/bench_model_cuda --only decode --batches 48,64 --gemv-mode 4 --tile-sweep > $O/run8_tile64_$r.txt 2>&1; echo "tile64 $r rc $?"
done
for f in $O/run8_*; do echo "== $(basename $f)"; grep -E "^(48|64) " $f | cut -c1-60; grep "tile split sweep" $f | sed 's/tile split sweep: //'; done
