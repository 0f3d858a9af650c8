#!/bin/bash
# session 19 run 7: the GPU tests after the review commit (one rotation expression, rope_rot,
# shared by the rope kernels and the fused attention; the append metadata staged before the
# attention's check instead of placeholder pointers)
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19f && tar xJf .carry/s19f/bin.tar.xz -C /tmp/s19f; B=/tmp/s19f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
for t in backend attention engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
PL_CUDA_TEST_BIG=1 timeout 240 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
