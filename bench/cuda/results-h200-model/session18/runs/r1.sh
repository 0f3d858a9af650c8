#!/bin/bash
# session 18 run 1: the greedy head (the LM head's tile GEMM folds each row's logits into its
# argmax key; no f32 logits, no argmax kernel after the graph). Tests on the new build, then
# base (session-16 final code) against it in interleaved rounds at batch 2/4/16/64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s18a && tar xJf .carry/s18a/bin.tar.xz -C /tmp/s18a; B=/tmp/s18a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
grep "greedy head" $O/test_backend.log
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 2,4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep -h "batch 64: step" $O/bm_*.txt | head -6
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
