#!/bin/bash
# Session 45, run 10: with every weight stage before the PDL wait a qkv CTA (8 k tiles of 64 at batch 4, 5 K splits x
# 48 tiles) now has half its weights in flight before its wait; fewer, longer splits might stream better. tile-splits
# 4 (192 CTAs, 10 k tiles each; 4 twice) and 3 (144 CTAs) against AUTO over the seed trace's batch-4 schedule, aa.
# .carry/k45 = 14cb0cd.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or10; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 200 $B/bench_model_cuda --schedule $s --schedule-ab aa,tile-splits:4,tile-splits:3,tile-splits:4 --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r10.tgz -C /tmp or10
