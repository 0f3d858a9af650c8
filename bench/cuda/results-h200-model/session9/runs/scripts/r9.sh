#!/bin/bash
# session 9 run 9: the tile kernel (TMA, one CTA per SM past 32 rows) as the default up to 64 rows: GPU tests, then the step against the old default (--gemv-mode 4: cuBLAS past 32 rows), interleaved
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 70 $B/$t > $O/run9_$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/run9_$t.txt)"; done
for r in 1 2; do
  timeout 40 stdbuf -oL $B/bench_model_cuda --only decode --batches 4,48,64 --steps 15 > $O/run9_new_$r.txt 2>&1; echo "new $r rc $?"
  timeout 40 stdbuf -oL $B/bench_model_cuda --only decode --batches 4,48,64 --steps 15 --gemv-mode 4 > $O/run9_old_$r.txt 2>&1; echo "old $r rc $?"
done
for f in $O/run9_new_1.txt $O/run9_old_1.txt $O/run9_new_2.txt $O/run9_old_2.txt; do echo "== $(basename $f)"; grep -E "^(4|48|64) " $f | cut -c1-160; done
