#!/bin/bash
# session 19 run 6: the MLP's SwiGLU made by the down projection's loads (the tile GEMM's
# cp.async stages, up to 8 rows) instead of its own kernel. GPU tests on the new build, then
# --swiglu-ab at batch 2, 4 and 8, then the committed code (bench_rope) against the new build
# in interleaved processes at batch 4.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19e && tar xJf .carry/s19e/bin.tar.xz -C /tmp/s19e; B=/tmp/s19e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8 --swiglu-ab > $O/ab.txt 2>&1 || echo "ab rc $?"
for b in 2 4 8; do
  echo "B$b: $(grep -E "SwiGLU: batch $b," $O/ab.txt | awk '{k = ($0 ~ /SwiGLU kernel/) ? "K" : "F"; printf "%s %s | ", k, $(NF-1)}')"
done
V=(rope model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
