#!/bin/bash
# session 9 run 1: L2 prefetch of the next projection from the skinny GEMMs (sweep), backend test
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

timeout 200 stdbuf -oL $B/bench_model_cuda_pf --only decode --batches 1,4,16,32 --prefetch-sweep 0,4,8,16,32,-16 > $O/run1_sweep.txt 2>&1; echo "sweep rc $?"
grep -E "^(device|model)" $O/run1_sweep.txt | cut -c1-160
grep -E "^(1|4|16|32) " $O/run1_sweep.txt
grep "prefetch sweep" $O/run1_sweep.txt | sed 's/prefetch sweep: //'
