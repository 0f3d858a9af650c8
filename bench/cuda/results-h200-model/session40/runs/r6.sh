#!/bin/bash
# Session 40, run 6: paired A/Bs of combinations (A+B) of runs 3-5's winners, the relay before the attention by rule (spacer bits 256:
# splits of 256 keys or more, 512: no PDL instead of a relay), qkv triggers at a quarter (4), 3/4 (5)) over the seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv).
# .carry/a5 = a4 (run 5) + those bits and modes and the + form of --schedule-ab (all off by default).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a5 && tar xJf .carry/a5/bin.tar.xz -C /tmp/a5; B=/tmp/a5/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or6; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,swiglu:8192+trigger:35,swiglu:8192+trigger:33,swiglu:8192+trigger:35+spacer:67968,spacer:67968,spacer:640,spacer:896,trigger:36,trigger:37,trigger:35,trigger:33,trigger:20,trigger:68,swiglu:8192+trigger:35+spacer:896,swiglu:8192,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp or6
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
