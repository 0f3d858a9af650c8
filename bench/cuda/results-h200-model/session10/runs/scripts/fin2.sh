#!/bin/bash
# session 10 second final call (after the dropped merge-in-GEMM try: the attention -> matmul test kept, the split workspace sized after the split hook): the full model check
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
M=/tmp/s10g/model; mkdir -p $M
OUT=$M timeout 470 bash scripts/gpu_model_check.sh --bin .carry/s10/bin --serving > $M/console.txt 2>&1; echo "model check rc $?"
tail -16 $M/console.txt
grep -E "attention -> matmul|FAIL" $M/test_cuda_backend.log | head -5
grep -E "^(1|4|64) |= host walk" $M/bench_model_cuda.txt | cut -c1-150
tar czf $O/s10g.tgz -C /tmp s10g
