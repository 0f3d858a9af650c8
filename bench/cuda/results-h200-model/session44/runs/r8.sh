#!/bin/bash
# Session 44, run 8 (a diagnostic): what the o projection's early CTAs meet in a batch-4 step whose longest context
# is just past 1024 (a 2048-key table), where run 7's o-alone:16 (o asking all the shared memory two CTAs leave)
# took 1.8% off the seed trace's steps. .carry/d44: bench_model_cuda built with -DPL_DIAG_STAMPS (run 7's code +
# --o-alone N for the whole run) and bench_model_plain (the same without stamps). Stamped steps at contexts
# 500-1100 (a 2048-key table) and 500-1000 (1024-key), o-alone 0 and 16 (500-1100 only), summarized by
# bench/cuda/diag_timeline.py (bench_model_plain, packed, was not run: device time).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/d44 && tar xJf .carry/d44/bin.tar.xz -C /tmp/d44; B=/tmp/d44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for c in "1100 0" "1100 16" "1000 0"; do
  set -- $c; a="--context $1 --context-spread 500"; oa=$2
  {
    n=$(echo $a | tr -d ' -')_oa$oa
    timeout 60 $B/bench_model_cuda --only decode --steps 6 --batches 4 $a --o-alone $oa --diag-stamps $O/$n.stamps > $O/$n.txt 2>&1 || echo "$n rc $?"
    python3 bench/cuda/diag_timeline.py $O/$n.stamps > $O/$n.timeline.txt 2>&1 || echo "$n timeline rc $?"
    gzip -f $O/$n.stamps
    echo "== $n: stamped $(grep -E '^4 ' $O/$n.txt | awk '{print $3, $6}')"
    grep -E "^(gate_up|o|attention|split merge|down|qkv) " $O/$n.timeline.txt | head -12
  }
done
tar czf ${OUT:-/tmp}/r8.tgz -C /tmp or8
