#!/bin/bash
# session 13 run 1: tile GEMM ring depth (4/3/2 stages, CTA smem kept at 97 KiB) and evict_first weights, interleaved
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $O/smi.txt
for r in 1 2; do
  for v in tst4 tst3 tst2 tst4ef; do
    s=$(date +%s.%N)
    timeout 100 $B/bench_$v --only decode --batches 4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
    echo "$v.$r $(echo "$(date +%s.%N) - $s" | bc) s"
  done
done
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
