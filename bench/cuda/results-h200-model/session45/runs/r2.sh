#!/bin/bash
# Session 45, run 2: placeholder CTAs (hook pad, pl_cuda_backend_tile_pad): a one-wave GEMM grid of g CTAs
# (sms <= g < 2 sms: gate/up's 152 tiles, o and down's 160 k-sliced tiles at batch 4) launched as 2 sms CTAs whose
# extra ones wait for the kernel before and leave, so that the block scheduler's two CTAs per SM hold one tile each
# instead of gate/up running on ~80 SMs (session 38's and run 1's stamps). pad:N = mode | kinds << 4 (mode 1 pairs
# (tile, placeholder) first; 2 tiles spread evenly; 3 pairs (placeholder, tile); kinds 1 o/down, 4 gate/up).
# .carry/k45 = 4a74a68 + the hook. test_cuda_backend first (test_tile_pad: every order bit for bit).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or2; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.log)"
grep -i "pad" $O/test_cuda_backend.log | head -5
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,pad:65,pad:66,pad:67,pad:17,pad:81;; *b8) L=pad:65,pad:81;; *) L=pad:65;; esac
  timeout 240 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp or2
