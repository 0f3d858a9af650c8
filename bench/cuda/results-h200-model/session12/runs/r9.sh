#!/bin/bash
# session 12 run 9: the committed step's tile split sweep at batch 20 and 32 (cluster path, 2 CTAs/SM)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/bench_model_cuda --only decode --batches 20,32 --tile-sweep --steps 12 > $O/tile_sweep.txt 2>&1; echo "rc $?"
grep -E "^tile split|^(20|32) " $O/tile_sweep.txt
