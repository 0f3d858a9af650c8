#!/bin/bash
# Session 41, run 5: the tile GEMM's split fixup arriving with one acq_rel atomic by thread 0 after the barrier instead of a
# fence by every thread, the atomic and a fence (arrived_last_ar; experiment bit 256 of tile_trigger: trigger:291 = the
# default qkv trigger 3 | 2 << 4 plus that bit; trigger:35 the default as a control). Paired A/Bs over the seed trace's
# batch-4 schedule and session 40's batch-2, 8 and 16 schedules. .carry/b5 = 9d0ee8c + that bit.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/b5 && tar xJf .carry/b5/bin.tar.xz -C /tmp/b5; B=/tmp/b5/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  L=aa,trigger:291,trigger:35,trigger:291,aa
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5
