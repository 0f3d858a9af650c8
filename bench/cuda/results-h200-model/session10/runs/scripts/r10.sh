#!/bin/bash
# session 10 run 10: the decode attention's split merge inside the output projection's tile kernel: GPU tests, then the step A/B
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 100 $B/$t > $O/run10_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run10_$t.txt)"; done
grep -E "FAIL|attention -> matmul" $O/run10_test_cuda_backend.txt | head -8
timeout 150 stdbuf -oL $B/bench_model_cuda --only decode --batches 2,4,8 --steps 20 --merge-ab > $O/run10_merge.txt 2>&1; echo "bench rc $?"
grep -E "^merge|^(2|4|8) " $O/run10_merge.txt | cut -c1-110
