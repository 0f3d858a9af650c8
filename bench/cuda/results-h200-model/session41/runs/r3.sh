#!/bin/bash
# Session 41, run 3: why the qkv partials in the attention were slower (run 2). Paired A/Bs against AUTO (parts in
# the attention, 4-byte loads) over the seed trace's batch-4 schedule and session 40's batch-8 schedule:
# qkv-parts:1 never (the GEMM adds its splits); 2 diagnostic: no sums anywhere, the attention reads qkv as left
# (wrong values; what removing the GEMM's tail gives); 3 diagnostic: the GEMM adds them AND the attention loads the
# (stale) planes (what the loads cost); 4 the planes read 16 bytes a lane, traded by shuffles (bit-identical).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/b3 && tar xJf .carry/b3/bin.tar.xz -C /tmp/b3; B=/tmp/b3/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or3; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv; do
  n=$(basename $s .csv)
  L=aa,qkv-parts:1,qkv-parts:2,qkv-parts:3,qkv-parts:4,aa
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp or3
