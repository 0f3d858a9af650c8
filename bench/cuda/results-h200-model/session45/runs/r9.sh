#!/bin/bash
# Session 45, run 9: with every weight stage now sent before the PDL wait up to 16 rows, do the launch-timing defaults
# of session 40 still hold? Paired against AUTO over the seed trace's batch-4 schedule (.carry/k45 = 14cb0cd):
# trigger:99 (gate/up and qkv let the next kernel launch halfway through their main loop), trigger:51 (o, down and
# qkv halfway; AUTO: qkv halfway, the rest at entry), swiglu-threads 512 and 256 (AUTO 1024 at 3-8 rows), aa.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or9; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 200 $B/bench_model_cuda --schedule $s --schedule-ab aa,trigger:99,trigger:51,swiglu-threads:512,swiglu-threads:256 --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r9.tgz -C /tmp or9
