#!/bin/bash
# Run 5: full check of `s37b` (this session's code: graph variants per key, the decode attention's splits
# from the step's contexts by default, bench-serving --steps-csv): test_cuda_attention, then
# scripts/gpu_model_check.sh --serving (GPU tests, memcheck, model benchmark, seed trace in three KV modes
# against transformers, heavy trace).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s37b && tar xJf .carry/s37b/bin.tar.xz -C /tmp/s37b; B=/tmp/s37b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 60 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 520 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r5.tgz -C $L model
