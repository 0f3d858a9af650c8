#!/bin/bash
# session 19 run 5: the GPU tests on the committed code (the final call's build plus a
# refactor of the fused rope's loads into load_head_lane / unpack_head_lane), then --rope-ab
# (the rope always in the attention against its own kernel) at batches 1-8 and 32-64 on
# whichever card this is.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19d && tar xJf .carry/s19d/bin.tar.xz -C /tmp/s19d; B=/tmp/s19d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
for t in backend attention engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
PL_CUDA_TEST_BIG=1 timeout 240 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
for bl in 1,2,4,8 32,48,64; do
  timeout 200 $B/bench_model_cuda --only decode --batches $bl --rope-ab > $O/ab_$bl.txt 2>&1 || echo "ab $bl rc $?"
  for b in ${bl//,/ }; do
    echo "B$b: $(grep -E "RoPE \+ K/V append: batch $b," $O/ab_$bl.txt | awk '{k = ($0 ~ /rope kernel/) ? "K" : "F"; printf "%s %s | ", k, $(NF-1)}')"
  done
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
