#!/bin/bash
# session 23 run 8: run 5's build (norms late by default): the GEMM's own split sums followed
# by the plain add + RMSNorm with its trigger after its loads (--parts-ab: mode 1), so the next
# GEMM's first stages no longer meet the split tails; against the fixed-point sums and the f32
# partials (--parts-ab2), both late; two rounds of the previous commit's binary for reference.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23e && tar xJf .carry/s23e/bin.tar.xz -C /tmp/s23e; B=/tmp/s23e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8,16 --parts-ab > $O/parts1.txt 2>&1 || echo "parts1 rc $?"
echo "== parts-ab (fixed / GEMM sums, norms late)"; s "split sums" $O/parts1.txt
timeout 150 $B/bench_model_cuda --only decode --batches 4,8 --parts-ab2 > $O/parts2.txt 2>&1 || echo "parts2 rc $?"
echo "== parts-ab2 (fixed / f32 partials, norms late)"; s "split sums" $O/parts2.txt
for r in 0 1; do timeout 60 $B/bench_prev --only decode --batches 2,4,8,16 > $O/prev.$r.txt 2>&1 || echo "prev rc $?"
  echo "prev.$r: $(grep -E '^(2|4|8|16) ' $O/prev.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
