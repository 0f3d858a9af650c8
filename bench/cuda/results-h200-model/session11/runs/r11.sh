#!/bin/bash
# session 11 run 11: the decode attention reading old keys before its PDL wait (TMA path, page pools) against after it; GPU tests
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_attention > $O/run11_test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -1 $O/run11_test_cuda_attention.txt)"
grep -m5 -i "fail" $O/run11_test_cuda_attention.txt | cut -c1-300
timeout 250 stdbuf -oL $B/bench_model_cuda --only decode --batches 32,48,64 --steps 15 --attn-early-ab > $O/run11_early.txt 2>&1; echo "bench rc $?"
grep -E "^attention old keys|^(32|48|64) |^device" $O/run11_early.txt | cut -c1-110
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 100 $B/$t > $O/run11_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run11_$t.txt)"; grep -m3 -i "fail" $O/run11_$t.txt | cut -c1-300; done
