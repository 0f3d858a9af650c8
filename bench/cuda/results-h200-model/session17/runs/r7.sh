#!/bin/bash
# session 17 run 7: past 16 rows the tile GEMM's K splits rounded up so that every SM gets a
# CTA (qkv 3 splits = 144 CTAs instead of 2 = 96, o and down 7 = 140 instead of 6 = 120;
# ../patches/run7_*.patch), against base (session-16 final), three interleaved rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
V=(base ceil)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 24,32,48,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(24|32|48|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
