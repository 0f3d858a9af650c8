#!/bin/bash
# session 26 run 9 (review): test_cuda_backend with test_matmul's pass 0 on the AUTO k-slice rule
# (x in 8-row allocations: the k-sliced tiles must launch from 2 rows), the test hook
# pl_cuda_backend_kslice_takes told x's rows (s26i).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26i && tar xJf .carry/s26i/bin.tar.xz -C /tmp/s26i
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
timeout 150 /tmp/s26i/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m6 "failed:" $O/test_cuda_backend.txt
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
