#!/bin/bash
# Run 5: full check of the committed code (a73d715, rebuilt as `.carry/s33b` with the `pagellm` CLI that `s32f` lacked): test_cuda_attention, then
# scripts/gpu_model_check.sh --serving (the GPU tests, memcheck, the model benchmark, the seed and
# heavy traces against transformers), as the twenty-sixth session's last full check did.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s33b && tar xJf .carry/s33b/bin.tar.xz -C /tmp/s33b; B=/tmp/s33b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 120 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $? $(tail -n 1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 480 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r5.tgz -C $L model
