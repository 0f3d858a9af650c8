#!/bin/bash
# Session 43, run 4: the decode attention's units interleaved further (.carry/s43b = f43 + decode_split_order 1-4; hook
# split-order, AUTO still the old order): test_cuda_attention (orders 2-4 bit for bit against the old order) and
# test_cuda_backend (the fused rope in orders 2-4), then split-order:3 (a sequence's splits from both ends) and
# split-order:4 (split-major's front and back alternating) against AUTO over the seed trace's batch-4
# schedule and session 40's batch 2/8/16 schedules.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s43b && tar xJf .carry/s43b/bin.tar.xz -C /tmp/s43b; B=/tmp/s43b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in attention backend; do
  timeout 150 $B/test_cuda_$t > $O/test_cuda_$t.log 2>&1; echo "test_cuda_$t rc $?: $(tail -1 $O/test_cuda_$t.log)"
  grep -iE "fail|differ" $O/test_cuda_$t.log | grep -v " 0 failed" | head -3
done
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=split-order:3,split-order:4,split-order:3,split-order:4;; *) L=split-order:3,split-order:4;; esac
  timeout 120 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4
