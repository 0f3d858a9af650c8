#!/bin/bash
# Session 47, run 6 (.carry/k47e: run 5's build + the last layer's add and the final norm as one op in a decode step +
# page-ahead:1, the decode attention's lane 0 loading its next tile's page id one issue ahead, an experiment).
# test_cuda_attention; paired per step over sched-b64-512: page-ahead:1, mlp-pre:1 and 3, tile-alone:56 with the
# cheaper norm; the seed schedule: page-ahead:1.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47e && tar xJf .carry/k47e/bin.tar.xz -C /tmp/k47e; B=/tmp/k47e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r6; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -n 1 $O/test_cuda_attention.txt)"
ab() { # name shape schedule list
  timeout 240 $B/bench_model_cuda --shape $2 --schedule $3 --schedule-ab $4 --schedule-out $O/$1.csv > $O/$1.txt 2>&1; echo "$1 rc $?"
  grep -E "^schedule|all steps" $O/$1.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
}
ab b64_4b qwen3-4b $D/session46/sched-b64-512.csv aa,page-ahead:1,mlp-pre:1,mlp-pre:3,tile-alone:56,page-ahead:1
ab seed_4b qwen3-4b $D/session39/seed-trace-steps-cpu.csv aa,page-ahead:1
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp o47r6
