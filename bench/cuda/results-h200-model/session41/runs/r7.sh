#!/bin/bash
# Session 41, run 7: the qkv partials in the attention again (AUTO), with their sums in a function the tile loop calls
# (__noinline__) instead of inlined into it: runs 2-4's slowdown held even for stale-plane loads (run 3's diagnostic 3),
# and the kernel's code had grown 4x. Now on top of the acq_rel fixup (run 5; AUTO from 3 rows). Paired A/Bs against
# AUTO over the seed trace's batch-4 schedule and session 40's batch-8 and 16 schedules: qkv-parts:1 never; 2 diagnostic
# (no sums, the attention reads qkv as left: wrong values); fixup:1 (the fences); then test_cuda_backend.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/b6 && tar xJf .carry/b6/bin.tar.xz -C /tmp/b6; B=/tmp/b6/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or7; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  L=aa,qkv-parts:1,qkv-parts:2,fixup:1,qkv-parts:1,aa
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
grep -iE "fail|fixup|partials" $O/test_cuda_backend.log | head -5
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp or7
