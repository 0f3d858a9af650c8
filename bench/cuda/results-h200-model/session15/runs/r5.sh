#!/bin/bash
# session 15 run 5: test_cuda_attention after its refusal checks moved into one helper (same checks),
# and where the step goes now (--ablate at batch 4 and 64, the committed kernels)
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15r/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/test_cuda_attention > $O/test_attention.log 2>&1; echo "attention rc $? $(tail -n 1 $O/test_attention.log)"
grep -m8 -iE "fail|error" $O/test_attention.log
timeout 200 $B/bench_model_cuda --only decode --batches 4,64 --ablate > $O/bm_ablate.txt 2>&1 || echo "ablate rc $?"
grep -iE "ablat|without" $O/bm_ablate.txt | head -30
grep -E "^(4|64) " $O/bm_ablate.txt
true
