#!/bin/bash
# Session 40, run 4: paired A/Bs of the SwiGLU kernel 8 elements a thread (swiglu:N, N & 65536) and relays of 1024-thread CTAs;
# spacer:N, N >> 20 warps, bit 128 the attention past 1.5 CTAs per SM) over the seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv).
# .carry/a3 = a2 (run 3) + pl_cuda_backend_swiglu_vec, the spacer's warps and bit 128 (all off by default).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a3 && tar xJf .carry/a3/bin.tar.xz -C /tmp/a3; B=/tmp/a3/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,swiglu:8192,swiglu:73728,swiglu:70400,swiglu:68096,swiglu:66816,swiglu:66560,swiglu:66048,swiglu:65792,spacer:67712,spacer:33588352,spacer:33588225,spacer:33564704,spacer:33588240,spacer:33588228,spacer:33588226,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
