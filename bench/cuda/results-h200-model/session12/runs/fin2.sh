#!/bin/bash
# session 12 final call 2: the model check with serving again (the first call's logs did not come back), logs tarred
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=${OUT:-/tmp/out}; L=/tmp/final-model; mkdir -p $O $L
OUT=$L timeout 400 bash scripts/gpu_model_check.sh --bin .carry/s12/bin --serving > $L/console.txt 2>&1; echo "model check rc $?"
tail -14 $L/console.txt
grep -E "^(1|4|64) " $L/bench_model_cuda.txt
grep -iE "prefill.*cuBLAS|of cuBLAS" $L/bench_model_cuda.txt | head -4
cat $L/compare_serving.txt 2>/dev/null | head -30
grep -hE "output tok/s|decode step" $L/bench_serving_cuda_*.txt | head -12
tar czf $O/final-model.tgz -C /tmp final-model
