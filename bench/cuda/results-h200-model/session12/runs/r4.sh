#!/bin/bash
# session 12 run 4: test_cuda_backend (tile GEMM with all four weight stages before the wait), tile prewait A/B, attention split sweep
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
timeout 250 $B/bench_model_cuda --only decode --batches 4,16,64 --tile-prewait-ab --attn-split-sweep > $O/prewait_ab.txt 2>&1; echo "bench rc $?"
grep -E "^tile GEMM|^attention split|^(4|16|64) " $O/prewait_ab.txt
