#!/bin/bash
# session 15 run 3: the split merge for up to 16 splits as one warp per row (loads in flight at once,
# no shared memory): attention tests; step A/B in separate processes, interleaved: bench_base (session
# 14), bench_pers (run 2's build: several units per CTA, one-round merge), bench_model_cuda (+ the
# warp-per-row split merge); the attention split sweep at batch 4 and 16; bench-attention at split shapes
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/test_cuda_attention > $O/test_attention.log 2>&1; echo "attention rc $? $(tail -n 1 $O/test_attention.log)"
grep -m8 -iE "fail|error" $O/test_attention.log
for r in 1 2 3; do
  for v in base pers model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 1,4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 150 $B/bench_model_cuda --only decode --batches 4,16 --attn-split-sweep > $O/bm_sweep.txt 2>&1 || echo "sweep rc $?"
timeout 100 $B/pagellm bench-attention --device cuda --only decode --decode-shapes 1x8192,4x640,8x4096,16x32768,4x4096 --no-check --iters 60 > $O/ba_new.txt 2>&1 || echo "ba rc $?"
grep "split sweep" $O/bm_sweep.txt
grep -E "decode-mma-paged-p128|decode-mma-ws-paged" $O/ba_new.txt
echo "== step ms (x roofline) =="; for f in $O/bm_base.*.txt $O/bm_pers.*.txt $O/bm_model_cuda.*.txt; do echo "$(basename $f): $(grep -E '^(1|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
true
