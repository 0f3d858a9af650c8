#!/bin/bash
# session 12 run 11: one CTA per SM past 16 rows (the new default): GPU tests, the step at batch 4/17/24/32/64, and the A/B against 2 CTAs/SM forced
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 90 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
timeout 120 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
timeout 90 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
timeout 150 $B/bench_model_cuda --only decode --batches 4,24,64 --steps 12 > $O/bm.txt 2>&1; echo "bm rc $?"
grep -E "^(4|24|64) " $O/bm.txt | awk '{printf "B%s %s ms %sx | ", $1, $3, $6}'; echo
