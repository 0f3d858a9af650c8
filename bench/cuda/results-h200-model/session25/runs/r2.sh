#!/bin/bash
# session 25 run 2: stamped step timelines (-DPL_DIAG_STAMPS build) at batch 4 (AUTO, and the
# k-sliced tiles forced), batch 8 (AUTO) and batch 6: where batch 8's step gains on batch 4's.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25b && tar xJf .carry/s25b/bin.tar.xz -C /tmp/s25b; B=/tmp/s25b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=("--batches 4" "--batches 4 --kslice 2" "--batches 8" "--batches 6" "--batches 8 --kslice 1")
for k in 0 1 2 3 4; do
  timeout 120 $B/bench_diag --only decode --steps 8 ${C[$k]} --diag-stamps $O/stamps_c$k.txt > $O/steps_c$k.txt 2>&1 || echo "diag $k rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_c$k.txt --step 2 > $O/timeline_c$k.txt 2>&1
  awk '$2 == 2' $O/stamps_c$k.txt | gzip -9 > $O/stamps_c${k}_step2.txt.gz; rm -f $O/stamps_c$k.txt
  echo "== c$k [${C[$k]}]: $(grep -E '^(4|6|8) ' $O/steps_c$k.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"; head -30 $O/timeline_c$k.txt
done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
