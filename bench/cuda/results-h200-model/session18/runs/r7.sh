#!/bin/bash
# session 18 run 7: the GPU tests after the review (the greedy launches share argmax_begin / argmax_end, the
# forward pass decides the greedy head once; no change in behaviour), test_cuda_model with PL_CUDA_TEST_BIG=1
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s18i && tar xJf .carry/s18i/bin.tar.xz -C /tmp/s18i; B=/tmp/s18i/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
timeout 150 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
grep -h -iE "failed|greedy head" $O/*.log | head
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
