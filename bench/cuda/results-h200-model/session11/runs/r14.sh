#!/bin/bash
# session 11 run 14: AUTO takes 4-warp decode attention CTAs past SMs / 8 units when old keys go out early; the step (old keys early / after the wait), GPU tests
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,2,4,8,64 --steps 15 --attn-early-ab > $O/run14_early.txt 2>&1; echo "bench rc $?"
grep -E "^attention old keys|^(1|2|4|8|64) |^device" $O/run14_early.txt | cut -c1-110
for t in test_cuda_attention test_cuda_backend test_cuda_engine; do timeout 150 $B/$t > $O/run14_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run14_$t.txt)"; grep -m3 -i "fail" $O/run14_$t.txt | cut -c1-300; done
timeout 120 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/run14_test_cuda_model.txt 2>&1; echo "test_cuda_model (BIG) rc $? $(tail -1 $O/run14_test_cuda_model.txt)"
