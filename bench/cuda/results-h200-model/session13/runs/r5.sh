#!/bin/bash
# session 13 run 5: greedy argmax with each thread's 8 loads issued first (bench_argmax) against run 2's build; test_cuda_backend
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
for r in 1 2; do
  for v in model_cuda argmax; do
    timeout 100 $B/bench_$v --only decode --batches 4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; grep -E "^batch (4|64): step" $f | sed 's/(means.*//'; done
