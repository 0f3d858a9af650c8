#!/bin/bash
# session 15 final call (model): scripts/gpu_model_check.sh --serving on the final code (decode
# attention: several work units per CTA past one wave, the warps' merge lane by lane)
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
OUT=$L/model timeout 400 bash scripts/gpu_model_check.sh --bin .carry/s15/bin --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) " $L/model/bench_model_cuda.txt
tar czf $O/final-model.tgz -C $L model
