#!/bin/bash
# session 10 run 6: the host walk of a replayed decode step (graph_begin to launch), per batch
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
lscpu | grep -E "Model name|^CPU\(s\)"
timeout 100 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,16,64 --steps 20 > $O/run6_walk.txt 2>&1; echo "bench rc $?"
grep -E "host walk|step .* = host|^(1|4|16|64) " $O/run6_walk.txt | cut -c1-220
which perf gdb valgrind ltrace 2>&1 | head -3
