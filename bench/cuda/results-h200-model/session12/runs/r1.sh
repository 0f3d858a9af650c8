#!/bin/bash
# session 12 run 1: exp_tile_xreg (x in registers / deeper rings at 32-64 rows), then the step ablation at batch 4 and 64
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 240 $B/exp_tile_xreg > $O/exp_tile_xreg.txt 2>&1; echo "exp rc $?"
timeout 200 $B/bench_model_cuda --only decode --batches 4,64 --ablate > $O/ablate.txt 2>&1; echo "ablate rc $?"
cat $O/exp_tile_xreg.txt
grep -E "^ablation|^(4|64) " $O/ablate.txt
