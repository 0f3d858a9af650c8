#!/bin/bash
# session 12 final call: the committed code (HEAD, incl. the eleventh session's review commit) on the GPU: model check with serving, then the attention check
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=${OUT:-/tmp/out}; mkdir -p $O/model $O/attention
OUT=$O/model timeout 400 bash scripts/gpu_model_check.sh --bin .carry/s12/bin --serving > $O/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $O/model/console.txt
grep -E "^(1|4|64) " $O/model/bench_model_cuda.txt
OUT=$O/attention timeout 180 bash scripts/gpu_check.sh --bin .carry/s12/bin > $O/attention/console.txt 2>&1; echo "attention check rc $?"
tail -12 $O/attention/console.txt
