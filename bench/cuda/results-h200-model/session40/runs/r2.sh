#!/bin/bash
# Session 40, run 2: paired A/Bs of new hooks (an empty PDL relay kernel before one op kind, spacer:MASK|CTAS<<8;
# the SwiGLU kernel's CTA width) over the seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv).
# .carry/a1 = a0 (run 1) + pl_cuda_backend_spacer and pl_cuda_backend_swiglu_threads (both off by default).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a1 && tar xJf .carry/a1/bin.tar.xz -C /tmp/a1; B=/tmp/a1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or2; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,spacer:1,spacer:2,spacer:4,spacer:8,spacer:16,spacer:32,spacer:64,swiglu-threads:64,swiglu-threads:128,swiglu-threads:512,swiglu-threads:1024,spacer:33794,spacer:67588,spacer:67585,spacer:33825,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp or2
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
