#!/bin/bash
# Run 11 (as run inline): `s35g`'s test_cuda_backend, test_cuda_engine, test_cuda_model.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g; export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive
for t in test_cuda_backend test_cuda_engine test_cuda_model; do timeout 60 /tmp/s35g/bin/$t > /tmp/$t.txt 2>&1; echo "$t rc $?: $(tail -1 /tmp/$t.txt)"; grep -m3 FAIL /tmp/$t.txt; done
