#!/bin/bash
# Session 46, run 3: where run 2's 0.8-1.1% at batch 64 over uniform contexts (order:2: no ranking, no reversal) comes
# from: order:3 ranks without reversing the odd passes, order:4 reverses them unranked (both EXPERIMENT values), against
# AUTO (ranked and reversed, by ballots) and order:2, paired per step over sched-b64-512 and sched-b64-heavy.
# test_cuda_attention first (orders 1-4 at several units per CTA). .carry/k46b.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46b && tar xJf .carry/k46b/bin.tar.xz -C /tmp/k46b; B=/tmp/k46b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r3; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -1 $O/test_cuda_attention.txt)"
for n in b64-512 b64-heavy; do
  s=$D/session46/sched-$n.csv
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab aa,order:3,order:4,order:2,order:3,order:4,aa --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp o46r3
