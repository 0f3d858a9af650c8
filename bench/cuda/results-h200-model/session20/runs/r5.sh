#!/bin/bash
# session 20 run 5: the decode attention's split merge inside the kernel again (the eleventh
# session's run 2, on today's kernel; the merge kernel's arithmetic shared through
# attn_merge.cuh, so the bits are the same): GPU tests, then --attn-merge-ab at batches 1-16.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
mkdir -p /tmp/s20f && tar xJf .carry/s20f/bin.tar.xz -C /tmp/s20f; B=/tmp/s20f/bin
for t in attention backend engine model; do timeout 200 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
for bl in 1,2,4,8 12,16; do
  timeout 150 $B/bench_model_cuda --only decode --batches $bl --attn-merge-ab > $O/ab_$bl.txt 2>&1 || echo "ab $bl rc $?"
  for b in ${bl//,/ }; do
    echo "B$b: $(grep -E "^attention split merge: batch $b," $O/ab_$bl.txt | awk '{k = ($0 ~ /merge kernel/) ? "K" : "A"; printf "%s %s | ", k, $(NF-1)}')"
  done
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
