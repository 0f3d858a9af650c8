#!/bin/bash
# Session 47, run 3: the add + RMSNorm of partials with fewer CTAs per row (parts-ctas:N; run 2 on an H100: 2 CTAs
# 0.9948, 5 0.9980 against AUTO's 10 at Qwen3-4B's batch 64), paired per step in one process: sched-b64-512 and the
# seed schedule for Qwen3-4B, sched-b64-512 for Qwen3-8B (dim 4096: AUTO 16 CTAs of one warp) and Qwen3-1.7B (dim
# 2048: AUTO 8). .carry/k47b.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47b && tar xJf .carry/k47b/bin.tar.xz -C /tmp/k47b; B=/tmp/k47b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r3; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
ab() { # name shape schedule list
  timeout 240 $B/bench_model_cuda --shape $2 --schedule $3 --schedule-ab $4 --schedule-out $O/$1.csv > $O/$1.txt 2>&1; echo "$1 rc $?"
  grep -E "^schedule|all steps" $O/$1.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
}
ab b64_4b qwen3-4b $D/session46/sched-b64-512.csv aa,parts-ctas:1,parts-ctas:2,parts-ctas:5,parts-ctas:2,parts-ctas:1,aa
ab seed_4b qwen3-4b $D/session39/seed-trace-steps-cpu.csv aa,parts-ctas:1,parts-ctas:2,parts-ctas:5
ab b64_8b qwen3-8b $D/session46/sched-b64-512.csv aa,parts-ctas:1,parts-ctas:2,parts-ctas:4,parts-ctas:8
ab b64_17b qwen3-1.7b $D/session46/sched-b64-512.csv aa,parts-ctas:1,parts-ctas:2,parts-ctas:4
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp o47r3
