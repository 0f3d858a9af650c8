#!/bin/bash
# Session 40, run 5: paired A/Bs of where the tile and k-sliced GEMMs let the next kernel launch (trigger:N = mode | kinds << 4:
# mode 1 after the PDL wait, 2 after the main loop, 3 halfway; kinds 1 o/down, 2 qkv, 4 gate/up + LM head) over the seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv).
# .carry/a4 = a3 (run 4) + pl_cuda_backend_tile_trigger (off by default).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a4 && tar xJf .carry/a4/bin.tar.xz -C /tmp/a4; B=/tmp/a4/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,trigger:33,trigger:34,trigger:35,trigger:17,trigger:18,trigger:19,trigger:65,trigger:66,trigger:67,trigger:49,swiglu:8192,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
