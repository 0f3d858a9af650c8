#!/bin/bash
# session 14 run 7: add + RMSNorm fused into the tile GEMMs at 2-16 rows only, as separate kernel instantiations (the plain kernels byte for byte as before): GPU tests, A/B against the committed build (bench_base), --fuse-norm-ab
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s14/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
for r in 1 2; do
  for v in base model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 2,4,8,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 200 $B/bench_model_cuda --only decode --batches 4,8 --fuse-norm-ab > $O/bm_ab.txt 2>&1 || echo "bm rc $?"
echo "== step ms (x roofline) =="; for f in $O/bm_base.*.txt $O/bm_model_cuda.*.txt; do echo "$(basename $f): $(grep -E '^(2|4|8|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep "add + RMSNorm" $O/bm_ab.txt | sed 's/add + RMSNorm: //'
