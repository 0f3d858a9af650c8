#!/bin/bash
# session 10 run 8: decode-step graphs captured in segments launched during the host walk: GPU model/engine tests, then the segment sweep
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for t in test_cuda_model; do timeout 100 $B/$t > $O/run8_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run8_$t.txt)"; done
grep -E "graphs |FAIL" $O/run8_test_cuda_model.txt | head -12
timeout 200 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,64 --steps 20 --graph-segments-ab > $O/run8_segments.txt 2>&1; echo "bench rc $?"
grep -E "= host walk|^(1|4|16|64) " $O/run8_segments.txt | sed 's/(median) = host walk/=/; s/ us + first graph launch call/ +/; s/ us + graphs on the device/ +/; s/ ms + the rest/ +/' | sed "s/graph segments, the first of/segs, first/" | cut -c1-170
