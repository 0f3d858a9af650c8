#!/bin/bash
# session 15 final call 2 (model): scripts/gpu_model_check.sh --serving on the final code (run 6 kept: greedy sampling without the upload and the copy back; argmax keys outside live_bytes)
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final2; mkdir -p $L/model
OUT=$L/model timeout 400 bash scripts/gpu_model_check.sh --bin .carry/s15r/bin --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) " $L/model/bench_model_cuda.txt
tar czf $O/final-model.tgz -C $L model
