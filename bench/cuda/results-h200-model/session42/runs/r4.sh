#!/bin/bash
# Session 42, run 4: run 1's form of the qkv partials in the decode attention with its run-once code short: one call
# site of the unit's partial loads (run 1 inlined them twice), their plane rounds not unrolled, the single-head
# rows past NW out of line (81 KB of sm_90a code against run 1's 118 KB; the plain kernel 67 KB). .carry/v4 =
# 4718dce + session41/patches/next-qkv-parts-outside-tile-loop.diff + that change. Paired A/Bs against AUTO
# (the partials in the attention) over the seed trace's batch-4 schedule and session 40's batch-8/16 schedules:
# qkv-parts:1 never (the GEMM sums, the committed path), 3 (the GEMM sums and the attention loads stale planes:
# the variant's own cost); test_cuda_backend (bit identity).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v4 && tar xJf .carry/v4/bin.tar.xz -C /tmp/v4; B=/tmp/v4/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,qkv-parts:1,qkv-parts:3,qkv-parts:1;; *b8) L=qkv-parts:1,qkv-parts:3;; *) L=qkv-parts:1;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4
