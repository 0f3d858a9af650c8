#!/bin/bash
# Session 39, run 3: full check of this session's code (the opt-in pairing removed; otherwise session 37's default path), the first run of
# gpu_model_check.sh --serving with the paged seed trace as medians of 3 processes: test_cuda_attention, then
# scripts/gpu_model_check.sh --serving (GPU tests, memcheck, model benchmark, seed trace in three KV modes
# against transformers, heavy trace).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f0 && tar xJf .carry/f0/bin.tar.xz -C /tmp/f0; B=/tmp/f0/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 90 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 480 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r3.tgz -C $L model
