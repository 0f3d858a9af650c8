#!/bin/bash
# session 15 run 7 (review): the GPU tests after two refactors with the same results (the decode
# attention's first unit computed once for both cursors; greedy sampling's keys cleared in one place)
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15r/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD
O=${OUT:-/tmp/out}; mkdir -p $O
for t in attention backend model engine; do
  timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"
  grep -m5 -i "fail" $O/test_$t.log | grep -v "0 failed"
done
true
