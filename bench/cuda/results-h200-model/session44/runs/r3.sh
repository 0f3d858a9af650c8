#!/bin/bash
# Session 44, run 3: the qkv projection at 2-8 rows as k-sliced 16-row tiles over all of K, no K splits and no fixup
# (.carry/k44 = 22f0140 + pl_cuda_gemv_ws.kslice_wide, hook kslice-wide, AUTO off): 1 the 4-stage CTAs two per SM (384
# CTAs for Qwen3-4B's 6144 rows: more than a wave), 2 3-stage CTAs three per SM (one wave). test_cuda_backend
# (test_kslice_wide), then each against AUTO over the seed trace's batch-4 schedule and session 40's batch 2/8 schedules.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k44 && tar xJf .carry/k44/bin.tar.xz -C /tmp/k44; B=/tmp/k44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or3; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in backend; do
  timeout 150 $B/test_cuda_$t > $O/test_cuda_$t.log 2>&1; echo "test_cuda_$t rc $?: $(tail -1 $O/test_cuda_$t.log)"
  grep -iE "fail|differ" $O/test_cuda_$t.log | grep -v " 0 failed" | head -3
done
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,kslice-wide:1,kslice-wide:2,kslice-wide:1,kslice-wide:2;; *) L=kslice-wide:1,kslice-wide:2;; esac
  timeout 200 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp or3
