#!/bin/bash
# Session 47, run 4 (.carry/k47c: run 2's hooks + pipe:N, the wide projection's / fused MLP's MMA groups kept in flight
# across stages: 1 wide o, 2 the MLP's down phase, 4 its gate/up phase). test_cuda_backend (pipe gives the same bits),
# then paired per step over sched-b64-512: Qwen3-4B pipe:1,2,3,7 and parts-ctas:2 with pipe:1; Qwen3-8B parts-ctas:2,4,8
# (AUTO 16) and pipe:1.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47c && tar xJf .carry/k47c/bin.tar.xz -C /tmp/k47c; B=/tmp/k47c/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r4; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 240 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -n 1 $O/test_cuda_backend.txt)"
ab() { # name shape schedule list
  timeout 240 $B/bench_model_cuda --shape $2 --schedule $3 --schedule-ab $4 --schedule-out $O/$1.csv > $O/$1.txt 2>&1; echo "$1 rc $?"
  grep -E "^schedule|all steps" $O/$1.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
}
ab b64_4b qwen3-4b $D/session46/sched-b64-512.csv aa,pipe:1,pipe:2,pipe:3,pipe:7,parts-ctas:2,pipe:1+parts-ctas:2,aa
ab b64_8b qwen3-8b $D/session46/sched-b64-512.csv aa,parts-ctas:2,parts-ctas:4,parts-ctas:8,pipe:1
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp o47r4
