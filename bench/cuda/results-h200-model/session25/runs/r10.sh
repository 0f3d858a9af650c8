#!/bin/bash
# session 25 run 10: run 9's build (x boxes in range, AUTO k-sliced from 2 rows): test_cuda_model, test_cuda_engine
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25j && tar xzf .carry/s25j/bin.tgz -C /tmp/s25j; B=/tmp/s25j
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/o10}; mkdir -p $O
for t in test_cuda_model test_cuda_engine; do timeout 50 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m4 -i "fail" $O/$t.txt | grep -v " 0 failed"; done
