#!/bin/bash
# Session 42, run 6: run 4's qkv partials in the attention with their loads as 16-byte pieces (one per head and plane)
# and 16 shuffles per head, q alone in the warps that hold no new key (AUTO; qkv-lean:1 is run 4's 4-byte loads).
# .carry/v5 = run 4's code + that. Paired A/Bs against AUTO over the seed trace's batch-4 schedule and session 40's
# batch-8 schedule: qkv-parts:1 (never: the GEMM sums, the committed path), qkv-lean:1; test_cuda_backend
# (both forms bit for bit against the GEMM's own sums).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v5 && tar xJf .carry/v5/bin.tar.xz -C /tmp/v5; B=/tmp/v5/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or6; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,qkv-parts:1,qkv-lean:1,qkv-parts:1,aa;; *b8) L=qkv-parts:1;; *) L=qkv-parts:1;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
grep -iE "fail|partials" $O/test_cuda_backend.log | head -5
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp or6
