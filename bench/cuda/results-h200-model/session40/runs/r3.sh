#!/bin/bash
# Session 40, run 3: paired A/Bs of the SwiGLU kernel's grid (swiglu:N = at most N & 255 CTAs a row of N >> 8 warps;
# the spacer before the attention, 264 CTAs, again) over the seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv).
# .carry/a2 = a1 (run 2) + pl_cuda_backend_swiglu_ctas (off by default).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a2 && tar xJf .carry/a2/bin.tar.xz -C /tmp/a2; B=/tmp/a2/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or3; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,swiglu:8192,swiglu:8198,swiglu:8196,swiglu:8194,swiglu:8193,swiglu:2049,swiglu:2052,swiglu:2056,swiglu:2064,swiglu:2080,swiglu:4100,swiglu:4106,swiglu:1034,spacer:67585,swiglu-threads:1024,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp or3
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
