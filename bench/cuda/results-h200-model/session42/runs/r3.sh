#!/bin/bash
# Session 42, run 3: a graphed decode step's uploads in one arena, sent by one copy on the stream before each
# segment's launch (AUTO) instead of copy nodes inside the graphs (uploads:1, the code before). .carry/v3 = 4718dce +
# the replay burst + the step arena. test_cuda_model (graphs against eager, with the step arena, the copy nodes and the
# two alternating), test_cuda_engine, test_cuda_backend; paired A/Bs over the seed trace's batch-4 schedule and
# session 40's batch 2/8/16 schedules; bench_model_cuda's step breakdown at batches 1, 4, 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v3 && tar xJf .carry/v3/bin.tar.xz -C /tmp/v3; B=/tmp/v3/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or3; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in model engine; do
  timeout 200 $B/test_cuda_$t > $O/test_cuda_$t.log 2>&1; echo "test_cuda_$t rc $?: $(tail -1 $O/test_cuda_$t.log)"
done
grep -E "^graphs " $O/test_cuda_model.log
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b2.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,uploads:1,uploads:1,aa;; *) L=uploads:1;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 200 $B/bench_model_cuda --batches 1,4,64 --only decode --steps 20 > $O/bench.txt 2>&1; echo "bench rc $?"
grep -E "^batch [0-9]+:|^(1|4|64) " $O/bench.txt
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp or3
