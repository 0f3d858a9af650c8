#!/bin/bash
# session 12 run 13: the tile split sweep at batch 48 and 64 with two more settings (1 CTA/SM, at most 4 or 3 splits)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/bench_model_cuda --only decode --batches 48,64 --tile-sweep --steps 12 > $O/tile_sweep64.txt 2>&1; echo "rc $?"
grep -E "^tile split|^(48|64) " $O/tile_sweep64.txt
