#!/bin/bash
# Session 44, run 4: is run 1-2's per-warp ring slow for its 224 bytes of shared memory more (the warps' barriers)?
# .carry/k44 = 22f0140 + run 2's rings, with rings 2-3 now inside the tile kernel's 99360 bytes (the barriers in the
# alignment slack before the ring, or after it), 6 = ring 1 at run 2's 99584 bytes, 7 = ring 2 there; the occupancy
# API's CTAs per SM of each form (printed by test_cuda_backend); then 2, 3, 6, 7 against AUTO over the seed trace's
# batch-4 schedule and 2, 3 over session 40's batch 8 schedule.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k44 && tar xJf .carry/k44/bin.tar.xz -C /tmp/k44; B=/tmp/k44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in backend; do
  timeout 150 $B/test_cuda_$t > $O/test_cuda_$t.log 2>&1; echo "test_cuda_$t rc $?: $(tail -1 $O/test_cuda_$t.log)"
  grep "CTAs per SM" $O/test_cuda_$t.log; grep -iE "fail|differ" $O/test_cuda_$t.log | grep -v " 0 failed" | head -3
done
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,kslice-ring:2,kslice-ring:3,kslice-ring:6,kslice-ring:7;; *) L=kslice-ring:2,kslice-ring:3;; esac
  timeout 200 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4
