#!/bin/bash
# Session 44, run 7: run 6 put run 5's table-width split on the o projection alone (o asking all the shared memory
# two CTAs leave: 1024-key steps 2.2% slower, 2048-key 1.9% faster; down level). A rule from the step's longest
# context: .carry/k44 = run 6's binary + hook o-alone:N (o asks it when the longest context is >= 64 N keys).
# o-alone 16, 20, 24 against AUTO over the seed trace's batch-4 schedule (16 twice), 16 and 20 over session 40's
# batch 8 schedule, 16 over batch 2.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k44 && tar xJf .carry/k44/bin.tar.xz -C /tmp/k44; B=/tmp/k44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or7; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,o-alone:16,o-alone:20,o-alone:24,o-alone:16;; *b8) L=o-alone:16,o-alone:20;; *) L=o-alone:16;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp or7
