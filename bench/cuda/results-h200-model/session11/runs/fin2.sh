#!/bin/bash
# session 11 final call: the full model check (tests with qwen3-0.6b, memcheck, bench_model_cuda, serving) on the last build (old keys before the PDL wait, 4-warp CTAs past SMs / 8 units)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
M=/tmp/s11g/model; mkdir -p $M
OUT=$M timeout 480 bash scripts/gpu_model_check.sh --bin .carry/s11/bin --serving > $M/console.txt 2>&1; echo "model check rc $?"
tail -16 $M/console.txt
grep -E "^(1|4|64) |= host walk" $M/bench_model_cuda.txt | cut -c1-150
tar czf $O/s11g.tgz -C /tmp s11g
