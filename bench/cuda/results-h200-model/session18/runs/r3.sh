#!/bin/bash
# session 18 run 3: the reservation fast path (no pool transactions when every layer's pages
# already hold the step's tokens) on top of the greedy head. Tests on the new build, then
# base (session-16 final code), greedy (the final call's build) and new in rotating order, three rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s18c && tar xJf .carry/s18c/bin.tar.xz -C /tmp/s18c; B=/tmp/s18c/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
V=(base greedy model_cuda)
for r in 0 1 2; do for k in 0 1 2; do v=${V[$(( (k + r) % 3 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^batch (4|64): step' $f | sed 's/ (means.*//; s/batch //; s/: step / /; s/(median) = //' | tr '\n' '|')"; done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
