#!/bin/bash
# session 16 run 1: diagnostic: the tile GEMM's x box halved past 16 rows (results wrong, timing real), the bound on a 2-CTA x multicast
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s16/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2 3; do
  for v in base xhalf; do
    s=$(date +%s.%N)
    timeout 120 $B/bench_$v --only decode --batches 4,32,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
    echo "$v $r: $(echo "$(date +%s.%N) - $s" | bc) s"
  done
done
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|32|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
