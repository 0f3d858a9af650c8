#!/bin/bash
# Run 3: stamped steps (`s38d`, the committed code's kernels built with -DPL_DIAG_STAMPS) at batch 4:
# uniform context 1100 and unequal 500-1100 (both a 2048-key table, 8 splits of 256), unequal
# 500-1000 (a 1024-key table, 6 splits of 192), uniform 1300; summaries by bench/cuda/diag_timeline.py.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38d && tar xJf .carry/s38d/bin.tar.xz -C /tmp/s38d; B=/tmp/s38d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for a in "--context 1100" "--context 1100 --context-spread 500" "--context 1000 --context-spread 500" "--context 1300"; do
  n=$(echo $a | tr -d ' -'); timeout 60 $B/bench_model_cuda --only decode --steps 6 --batches 4 $a --diag-stamps $O/$n.stamps > $O/$n.txt 2>&1 || echo "$n rc $?"
  python3 bench/cuda/diag_timeline.py $O/$n.stamps > $O/$n.timeline.txt 2>&1 || echo "$n timeline rc $?"
  gzip -f $O/$n.stamps
  echo "== $n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"; head -40 $O/$n.timeline.txt
done
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp o3
