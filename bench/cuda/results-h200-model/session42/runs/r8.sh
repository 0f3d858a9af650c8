#!/bin/bash
# Session 42, run 8: the decode attention without the per-unit work past its query rows (.carry/f42b = 38def8a + the
# LEAN kernels, AUTO; attn-lean:1 the kernels as committed): test_cuda_backend (the fused rope both ways, bit for bit
# against the rope kernel), test_cuda_attention; paired A/Bs over the seed trace's batch-4 schedule and session 40's
# batch 2/8 schedules.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f42b && tar xJf .carry/f42b/bin.tar.xz -C /tmp/f42b; B=/tmp/f42b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or8; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,attn-lean:1,attn-lean:1;; *) L=attn-lean:1;; esac
  timeout 100 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
for t in backend attention; do
  timeout 120 $B/test_cuda_$t > $O/test_cuda_$t.log 2>&1; echo "test_cuda_$t rc $?: $(tail -1 $O/test_cuda_$t.log)"
done
grep -iE "fail" $O/test_cuda_backend.log | head -3
tar czf ${OUT:-/tmp}/r8.tgz -C /tmp or8
