#!/bin/bash
# session 16 run 4: up to 16 tokens the tile GEMM's stage is 18 KiB (x of 16 rows, was 24 with x of 64), so 5 or 6 stages fit at two CTAs per SM; test_cuda_backend (5 stages); three builds interleaved (base = committed); cp.async vs TMA with 5 stages
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s16/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -iE "fail|error" $O/test_backend.log
for r in 1 2 3; do
  if [ $r = 2 ]; then L="s6 s5 base"; else L="base s5 s6"; fi
  for v in $L; do
    timeout 120 $B/bench_$v --only decode --batches 1,2,4,8,16 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 200 $B/bench_s5 --only decode --batches 4,16 --tile-copy-ab > $O/copy_ab.txt 2>&1 || echo "copy ab rc $?"
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(1|2|4|8|16) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep "tile copy" $O/copy_ab.txt | grep "default kernels"
