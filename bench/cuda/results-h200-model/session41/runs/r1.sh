#!/bin/bash
# Session 41, run 1: where the small kernels trigger their dependents (PDL), paired per step over the seed
# trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv): small-trigger = attention (bits 0-3:
# 1 after wait, 2 at end) | merge (4-7) | SwiGLU (8-11) | partials' norm (12-15: 1 after wait, 2 after loads,
# 3 at end). .carry/b1 = the committed code + the hook (off by default). One process of the seed trace after.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/b1 && tar xJf .carry/b1/bin.tar.xz -C /tmp/b1; B=/tmp/b1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or1; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,small-trigger:1,small-trigger:2,small-trigger:16,small-trigger:32,small-trigger:256,small-trigger:512,small-trigger:4096,small-trigger:8192,small-trigger:12288,small-trigger:18,aa
date +%T; timeout 400 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
timeout 60 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --steps-csv $O/steps.seed > $O/seed.txt 2>&1; echo "seed rc $?: $(grep -E '^full-batch decode step / its' $O/seed.txt)"
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp or1
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
