#!/bin/bash
# session 13 run 10: norm weights read before the PDL wait (add_rmsnorm bf16x8, q/k norm + RoPE (+ append)): GPU tests, A/B against the committed build
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
timeout 120 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
for r in 1 2; do
  for v in base model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 1,4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(1|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
