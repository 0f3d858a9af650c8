#!/bin/bash
# Run 7: full check of the session's code (`s35f`): scripts/gpu_model_check.sh --serving (the GPU
# tests, memcheck, the model benchmark, the seed trace in three KV modes against transformers, the
# heavy trace now with --prefill-step 2048).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35f && tar xJf .carry/s35f/bin.tar.xz -C /tmp/s35f; B=/tmp/s35f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
OUT=$L/model timeout 540 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r7.tgz -C $L model
