#!/bin/bash
# session 12 run 5: add + RMSNorm in the o/down projections' tile kernel: tests, then the step A/B
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
timeout 120 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
grep -m5 -i "fail" $O/test_engine.log
timeout 200 $B/bench_model_cuda --only decode --batches 2,3,4 --fuse-norm-ab > $O/norm_ab.txt 2>&1; echo "bench rc $?"
grep -E "^add \+ RMSNorm|^(2|3|4) " $O/norm_ab.txt
