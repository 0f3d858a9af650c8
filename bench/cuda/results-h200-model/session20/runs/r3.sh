#!/bin/bash
# session 20 run 3: the one-kernel MLP (no L2 policy) alone against its three kernels
# (new "MLP alone" lines, at batch 2 where the steps ran), the big model test, and
# compute-sanitizer over the batch-4 steps that faulted in run 2.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
mkdir -p /tmp/s20d && tar xJf .carry/s20d/bin.tar.xz -C /tmp/s20d; B=/tmp/s20d/bin
timeout 150 $B/bench_model_cuda --batches 2 --steps 5 > $O/alone.txt 2>&1; echo "alone rc $?"; grep -E "^MLP alone|GEMMs alone, (4|16) rows|error" $O/alone.txt
PL_CUDA_TEST_BIG=1 timeout 200 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"; grep -m5 -iE "fail|error" $O/test_model.log
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 240 $CS --tool memcheck --print-limit 5 $B/bench_model_cuda --only decode --batches 4 --steps 2 > $O/memcheck_b4.txt 2>&1; echo "memcheck rc $?"
grep -m12 -E "Invalid|at .*mlp|at .*kernel|Address|ERROR SUMMARY|error" $O/memcheck_b4.txt | cut -c1-200
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
