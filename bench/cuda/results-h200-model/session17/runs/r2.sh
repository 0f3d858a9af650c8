#!/bin/bash
# session 17 run 2: the tile GEMM's balanced grid up to 16 rows (tile_balance 2: every CTA the
# same number of 64-k steps, ranges across tile ends; 3: only where equal splits fill badly).
# Tests on the new build, then --tile-balance-ab 2 and 3, then base (session-16 final) against
# the new build's default (equal splits, the 1-D grid) in interleaved rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8,16 --tile-balance-ab 2 > $O/bal2.txt 2>&1 || echo "bal2 rc $?"
timeout 100 $B/bench_model_cuda --only decode --batches 4,12 --tile-balance-ab 3 > $O/bal3.txt 2>&1 || echo "bal3 rc $?"
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
grep "tile GEMM grid" $O/bal2.txt $O/bal3.txt | sed 's/.*txt://'
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
