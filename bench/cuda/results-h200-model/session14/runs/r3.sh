#!/bin/bash
# session 14 run 3: (epilogue inputs by cp.async after the wait; pending GEMM kept across graph cuts) add + RMSNorm fused into the tile GEMMs around it: GPU tests, --fuse-norm-ab
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s14/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,16,64 --fuse-norm-ab > $O/bm_ab.txt 2>&1 || echo "bm rc $?"
grep -E "^(2|4|16|64) " $O/bm_ab.txt
grep "add + RMSNorm" $O/bm_ab.txt
