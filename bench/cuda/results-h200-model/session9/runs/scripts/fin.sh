#!/bin/bash
# session 9 final call (TMA decode copies): attention check (tests, sanitizers, bench, anchors), then the model check
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
A=/tmp/s9f/attention M=/tmp/s9f/model; mkdir -p $A $M
OUT=$A timeout 250 bash scripts/gpu_check.sh --bin .carry/cm/bin > $A/console.txt 2>&1; echo "attention check rc $?"
tail -22 $A/console.txt
OUT=$M timeout 330 bash scripts/gpu_model_check.sh --bin .carry/cm/bin --serving > $M/console.txt 2>&1; echo "model check rc $?"
tail -16 $M/console.txt
grep -E "^(1|4|64) " $M/bench_model_cuda.txt
tar czf $O/s9f.tgz -C /tmp s9f
