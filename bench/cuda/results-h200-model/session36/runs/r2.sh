#!/bin/bash
# Run 2: full check of the committed code (`s35g` = `dbebed2`, same SASS as `04fd345`): scripts/gpu_model_check.sh --serving (the GPU
# tests, memcheck, the model benchmark, the seed trace in three KV modes against transformers, the
# heavy trace with --prefill-step 2048), and test_cuda_attention first.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g; B=/tmp/s35g/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 60 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 520 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r2.tgz -C $L model
