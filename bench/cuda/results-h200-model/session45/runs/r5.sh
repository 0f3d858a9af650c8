#!/bin/bash
# Session 45, run 5: run 4 again on another call (pre-all:15 twice, 11 = o + down + gate/up, 3 = o + down, 9 = o +
# gate/up over the seed trace; 15 and 11 over batch 8; 15 over batches 2 and 16). Same binary as run 4 (.carry/k45).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=pre-all:15,pre-all:11,pre-all:3,pre-all:9,pre-all:15;; *b8) L=pre-all:15,pre-all:11;; *) L=pre-all:15;; esac
  timeout 240 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5
