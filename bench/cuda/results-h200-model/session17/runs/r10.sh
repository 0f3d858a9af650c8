#!/bin/bash
# session 17 run 10: run 9 (illegal instruction) split in two: A = the weight rows, their
# shared-memory offsets and validity worked out once per CTA, x as before
# (../patches/run10_*); B = A with the offsets worked out per copy again (run10b_*).
# test_cuda_backend on both; then three rounds base / A / B where they pass.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o10; mkdir -p $O
V=(base)
for v in a b; do timeout 200 $B/test_$v > $O/test_$v.log 2>&1; rc=$?; echo "test $v rc $rc $(tail -n 1 $O/test_$v.log)"; [ $rc = 0 ] && V+=($v); done
if [[ " ${V[*]} " == *" a "* ]]; then
  timeout 100 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model (A) rc $? $(tail -n 1 $O/test_model.log)"
  timeout 200 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine (A) rc $? $(tail -n 1 $O/test_engine.log)"
fi
n=${#V[@]}
for r in 0 1 2; do for k in $(seq 0 $((n - 1))); do v=${V[$(( (k + r) % n ))]}
  timeout 120 $B/bench_$v --only decode --batches 2,4,8,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|8|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
