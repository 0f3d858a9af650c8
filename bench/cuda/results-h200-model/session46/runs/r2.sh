#!/bin/bash
# Session 46, run 2: the decode attention's context ranking by warp ballots (one round of loads) against the loop of
# loads it replaces (order:3, kept for this run only) and against no ranking (order:2, run 1: 1.1% faster at batch 64,
# uniform contexts), paired per step at batch 64 over uniform contexts 513-552 and over unequal contexts 128-2560
# (sched-b64-heavy.csv, seed 46). test_cuda_attention first (ranking ties, 64 equal contexts). .carry/k46a.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46a && tar xJf .carry/k46a/bin.tar.xz -C /tmp/k46a; B=/tmp/k46a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r2; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -1 $O/test_cuda_attention.txt)"
for n in b64-512 b64-heavy; do
  s=$D/session46/sched-$n.csv
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab aa,order:3,order:2,order:3,order:2,aa --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp o46r2
