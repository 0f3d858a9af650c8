#!/bin/bash
# Session 31, run 8: the committed test_cuda_backend (s31g: its MLP check folded into one loop
# over the default, one and the whole ring of pre-wait stages; the library is s31e's).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s31g && tar xJf .carry/s31g/bin.tar.xz -C /tmp/s31g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD
O=/tmp/o8; mkdir -p $O
timeout 150 /tmp/s31g/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m8 -i "FAIL" $O/test_cuda_backend.txt
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
