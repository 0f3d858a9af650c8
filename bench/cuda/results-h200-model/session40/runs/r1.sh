#!/bin/bash
# Session 40, run 1: the paired schedule replay's A/A floor, then a paired A/B per backend hook over the
# seed trace's 233 batch-4 steps (../../session39/seed-trace-steps-cpu.csv), all in one process; one
# process of the seed trace itself after it. .carry/a0 = the committed code + the list form of --schedule-ab.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/a0 && tar xJf .carry/a0/bin.tar.xz -C /tmp/a0; B=/tmp/a0/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or1; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
L=aa,aa,early,warps:8,copy:1,order:1,order:2,kslice:1,parts:1,splits:6,splits:4,tile-ctas:1,tile-splits:4,tile-splits:3,tile-copy:1,wide:2,mlp:2,aa
date +%T; timeout 420 $B/bench_model_cuda --schedule $S --schedule-ab $L --schedule-out $O/ab.csv > $O/ab.txt 2>&1; echo "ab rc $?"; date +%T
timeout 60 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --steps-csv $O/steps.seed > $O/seed.txt 2>&1; echo "seed rc $?: $(grep -E '^full-batch decode step / its' $O/seed.txt)"
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp or1
grep -E "^schedule|all steps|tables of" $O/ab.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: 233 steps.*timed pass:/:/'
