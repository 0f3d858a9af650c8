#!/bin/bash
# session 23 run 7: past 16 rows, two CTAs per SM (and more K splits) for GEMMs of few tiles:
# qkv only (48 tiles: 5 splits, 240 CTAs instead of 96; --tile-two-ab 21) at batches 32, 48,
# 64, and qkv, o and down (o, down: 8 splits, 160 CTAs instead of 120; --tile-two-ab 1) at 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23g && tar xJf .carry/s23g/bin.tar.xz -C /tmp/s23g; B=/tmp/s23g/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 200 $B/bench_model_cuda --only decode --batches 32,48,64 --tile-two-ab 21 > $O/two21.txt 2>&1 || echo "two21 rc $?"
echo "== tile-two-ab 21 (qkv)"; s "tile GEMM split" $O/two21.txt
timeout 150 $B/bench_model_cuda --only decode --batches 64 --tile-two-ab 1 > $O/two1.txt 2>&1 || echo "two1 rc $?"
echo "== tile-two-ab 1 (qkv, o, down)"; s "tile GEMM split" $O/two1.txt
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
