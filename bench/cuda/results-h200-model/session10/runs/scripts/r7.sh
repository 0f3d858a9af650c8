#!/bin/bash
# session 10 run 7: decode-step graphs captured in segments launched during the host walk: GPU model/engine tests, then the segment sweep
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for t in test_cuda_model test_cuda_engine; do timeout 100 $B/$t > $O/run7_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run7_$t.txt)"; done
grep -E "graphs |FAIL" $O/run7_test_cuda_model.txt | head -12
timeout 200 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,16,64 --steps 20 --graph-segments-ab > $O/run7_segments.txt 2>&1; echo "bench rc $?"
grep -E "= host walk|^(1|4|16|64) " $O/run7_segments.txt | sed 's/(median) = host walk/=/; s/ us + first graph launch call/ +/; s/ us + graphs on the device/ +/; s/ ms + the rest/ +/' | cut -c1-160
