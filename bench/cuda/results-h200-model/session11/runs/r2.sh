#!/bin/bash
# session 11 run 2: the decode attention's split merge in the kernel (last split CTA per unit) against the merge kernel; GPU tests
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_attention > $O/run2_test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -1 $O/run2_test_cuda_attention.txt)"
grep -m5 -i "fail" $O/run2_test_cuda_attention.txt | cut -c1-300
timeout 200 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,8,16 --steps 15 --attn-merge-ab > $O/run2_merge.txt 2>&1; echo "bench rc $?"
grep -E "^attention merge|^(1|4|8|16) |^device" $O/run2_merge.txt | cut -c1-110
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 100 $B/$t > $O/run2_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run2_$t.txt)"; grep -m3 -i "fail" $O/run2_$t.txt | cut -c1-300; done
