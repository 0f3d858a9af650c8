#!/bin/bash
# session 16 run 5: the refilled-early ring on one card: r4p4 = run 3's build (4 stages of 24 KiB, 4 weight stages before the PDL wait), r4p3 (3 before the wait), s5p3 (up to 16 tokens 5 stages of 18 KiB, 3 before the wait), base = committed; four rounds, the order rotating
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s16/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
V=(base r4p4 r4p3 s5p3)
for r in 0 1 2 3; do
  for k in 0 1 2 3; do v=${V[$(( (k + r) % 4 ))]}
    timeout 120 $B/bench_$v --only decode --batches 2,4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
echo "== step ms (x roofline) =="; for v in ${V[@]}; do for f in $O/bm_$v.*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done; done
cd $O && tar czf r5.tgz bm_*.txt gpu.txt && rm bm_*.txt
