#!/bin/bash
# session 20 run 1: the decode MLP as one kernel (gate/up, SwiGLU, down in one launch; cluster
# of 4 CTAs share h through distributed shared memory; the partials added after a grid barrier).
# test_cuda_backend (its new test_mlp), then --mlp-ab at batches 1-16, then the model and engine tests.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s20a && tar xJf .carry/s20a/bin.tar.xz -C /tmp/s20a; B=/tmp/s20a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"; grep -m8 -iE "fail|error|mlp" $O/test_backend.log
for bl in 1,2,4,8 12,16; do
  timeout 150 $B/bench_model_cuda --only decode --batches $bl --mlp-ab > $O/ab_$bl.txt 2>&1 || echo "ab $bl rc $?"
  for b in ${bl//,/ }; do
    echo "B$b: $(grep -E "^MLP: batch $b," $O/ab_$bl.txt | awk '{k = ($0 ~ /three/) ? "3K" : "1K"; printf "%s %s | ", k, $(NF-1)}')"
  done
done
grep -m3 -iE "error|fail" $O/ab_*.txt
timeout 100 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
timeout 100 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
