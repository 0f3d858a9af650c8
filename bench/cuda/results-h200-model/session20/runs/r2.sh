#!/bin/bash
# session 20 run 2: the one-kernel MLP after run 1's faults (the residency query wanted a grid;
# the C=1 kernel hit an illegal instruction at its cp.async with an L2 policy, the ptxas
# miscompile of the seventeenth session). b: the policy made inside each copy's asm block;
# c: no L2 policy. Backend tests of both, then --mlp-ab of both at batches 1-16.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
for v in s20b s20c; do
  mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; B=/tmp/$v/bin
  timeout 200 $B/test_cuda_backend > $O/${v}_test_backend.log 2>&1; echo "$v backend rc $? $(tail -n 1 $O/${v}_test_backend.log)"; grep -m6 -iE "fail|error" $O/${v}_test_backend.log
done
for v in s20b s20c; do
  B=/tmp/$v/bin
  for bl in 1,2,4,8 12,16; do
    timeout 150 $B/bench_model_cuda --only decode --batches $bl --mlp-ab > $O/${v}_ab_$bl.txt 2>&1 || echo "ab $bl rc $?"
    for b in ${bl//,/ }; do
      echo "$v B$b: $(grep -E "^MLP: batch $b," $O/${v}_ab_$bl.txt | awk '{k = ($0 ~ /three/) ? "3K" : "1K"; printf "%s %s | ", k, $(NF-1)}')"
    done
  done
done
B=/tmp/s20b/bin
timeout 100 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
timeout 100 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
