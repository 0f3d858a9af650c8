#!/bin/bash
# session 23 run 9: the review's tidy of op_add_rmsnorm (parts_ctas computed once):
# test_cuda_backend.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23h && tar xJf .carry/s23h/bin.tar.xz -C /tmp/s23h; B=/tmp/s23h/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD
O=/tmp/o9; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?"; tail -1 $O/test_cuda_backend.txt
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
