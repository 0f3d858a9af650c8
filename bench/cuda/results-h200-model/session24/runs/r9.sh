#!/bin/bash
# session 24 run 9: the review's tidy (the k-sliced and untiled MMA kernels share their warp-sum
# epilogue; k-sliced launches counted where they launch): test_cuda_backend; one step run at
# batches 4 and 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24m && tar xJf .carry/s24m/bin.tar.xz -C /tmp/s24m; B=/tmp/s24m/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m4 -i "fail" $O/test_cuda_backend.txt | grep -v " 0 failed"
timeout 40 $B/bench_model_cuda --only decode --batches 4,8 --steps 10 > $O/steps.txt 2>&1 || echo "bench rc $?"
grep -E "^(4|8) " $O/steps.txt
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
