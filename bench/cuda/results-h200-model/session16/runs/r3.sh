#!/bin/bash
# session 16 run 3: the tile GEMM refills a stage as soon as every warp is done with it (all 4 stages in flight while waiting, was 3): test_cuda_backend, three interleaved rounds against the committed build
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s16/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -iE "fail|error" $O/test_backend.log
for r in 1 2 3; do
  if [ $r = 2 ]; then L="ring4 base"; else L="base ring4"; fi
  for v in $L; do
    timeout 120 $B/bench_$v --only decode --batches 2,4,16,32,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|32|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
