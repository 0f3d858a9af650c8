#!/bin/bash
# session 26 run 1: full check of ed5b096 (x boxes in range, rec_holding):
# test_cuda_attention, then scripts/gpu_model_check.sh --serving (the GPU tests, memcheck,
# the model benchmark, the seed and heavy traces against transformers; the heavy trace's JSON
# gzipped by the script).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a; B=/tmp/s26a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 120 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $? $(tail -n 1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 480 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
timeout 60 $B/bench_model_cuda --only decode --batches 6,8 > $L/model/bench_model_cuda_b6_b8.txt 2>&1; grep -E "^(6|8) " $L/model/bench_model_cuda_b6_b8.txt
tar czf $O/r1.tgz -C $L model
