#!/bin/bash
# session 10 run 4: the part of a step outside the layers: the LM head alone and greedy sampling, per row count
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 250 stdbuf -oL $B/bench_model_cuda --batches 4,64 --steps 10 > $O/run4_bench.txt 2>&1; echo "bench rc $?"
grep -E "LM head|GEMMs alone|device sampling|^(4|64) " $O/run4_bench.txt | cut -c1-200
