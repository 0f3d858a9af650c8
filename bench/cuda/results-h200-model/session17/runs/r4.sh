#!/bin/bash
# session 17 run 4: run 3's build with the tile GEMM's main loop nested per tile (the inner
# loop as before the balanced grid, no divisions in it). Base = session-16 final.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
timeout 240 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"; grep -m6 -iE "fail|error" $O/test_backend.log
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
timeout 100 $B/bench_model_cuda --only decode --batches 2,4,8 --tile-balance-ab 2 > $O/bal2.txt 2>&1 || echo "bal2 rc $?"
for v in base model_cuda; do timeout 150 $B/bench_$v --batches 4 > $O/full_$v.txt 2>&1 || echo "full $v rc $?"; done
grep "tile GEMM grid" $O/bal2.txt | sed 's/.*txt://'
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep -H "alone.*, 4 rows\|alone, 16 rows\|alone, 1 rows" $O/full_*.txt | sed 's/.*full_//'
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
