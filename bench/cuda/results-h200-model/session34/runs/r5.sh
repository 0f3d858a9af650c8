#!/bin/bash
# Run 5: stamped batch-64 steps of `s34c` (bench_diag, -DPL_DIAG_STAMPS) with --attn-l2 0 and 8:
# do the attention's CTAs enter while qkv streams, and does pulling their tiles into L2 shorten
# the attention? Raw stamps are read here by diag_timeline.py (not kept).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34c && tar xJf .carry/s34c/bin.tar.xz -C /tmp/s34c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34c/bin O=/tmp/o5; mkdir -p $O
for n in 0 8; do
  timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 --attn-l2 $n --diag-stamps $O/stamps_$n.txt > $O/diag_$n.txt 2>&1 || echo "diag $n rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$n.txt > $O/timeline_$n.txt 2>&1; gzip $O/stamps_$n.txt
  echo "== l2 $n: $(grep -E '^64 ' $O/diag_$n.txt | awk '{print $3, $6}')"; head -30 $O/timeline_$n.txt
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
