#!/bin/bash
# session 19 run 4: the fused rope once more on one card: --rope-ab at batches 12 and 16 (run
# 2: 2-3% slower at 16, run 3: level to 1% slower at 12-16), then base (session-18 final code)
# against the new build in interleaved processes at batches 4, 16 and 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19b && tar xJf .carry/s19b/bin.tar.xz -C /tmp/s19b; B=/tmp/s19b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
for b in 12 16; do
  timeout 120 $B/bench_model_cuda --only decode --batches $b --rope-ab > $O/ab_$b.txt 2>&1 || echo "ab $b rc $?"
  echo "B$b: $(grep -E 'RoPE \+ K/V append' $O/ab_$b.txt | awk '{k = ($0 ~ /rope kernel/) ? "K" : "F"; printf "%s %s | ", k, $(NF-1)}')"
done
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
