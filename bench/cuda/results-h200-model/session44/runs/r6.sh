#!/bin/bash
# Session 44, run 6: run 5's kslice-smem:8/16 took 2% off the seed trace's 2048-key-table steps and added 2% to its
# 1024-key ones; which of the two k-sliced GEMMs carries which? .carry/k44 = run 5's binary with kslice-smem:N =
# KiB + 100 * which (1: o, K <= 2N; 2: down). 116 (o only) and 216 (down only) against AUTO over the seed trace's
# batch-4 schedule, twice each, with run 5's 16 (both) beside them.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k44 && tar xJf .carry/k44/bin.tar.xz -C /tmp/k44; B=/tmp/k44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or6; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv; do
  n=$(basename $s .csv)
  L=aa,kslice-smem:116,kslice-smem:216,kslice-smem:16,kslice-smem:116,kslice-smem:216
  timeout 200 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp or6
