#!/bin/bash
# session 10 run 11: the decode attention's K/V copies in the step (AUTO: TMA at 4-warp CTAs, against cp.async), batches 32 and 64; GPU tests of the build with the hook
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 stdbuf -oL $B/bench_model_cuda --only decode --batches 32,64 --steps 15 --attn-copy-ab > $O/run11_attn_copy.txt 2>&1; echo "bench rc $?"
grep -E "^attention copies|^(32|64) " $O/run11_attn_copy.txt | cut -c1-100
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 100 $B/$t > $O/run11_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run11_$t.txt)"; done
