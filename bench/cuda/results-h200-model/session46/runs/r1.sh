#!/bin/bash
# Session 46, run 1: every backend hook that runs at 64 rows paired per step over batch 64 at uniform contexts 513-552
# (the model benchmark's context-512 rows, 1.34x: the one batch-64 figure above 1.3x), one process, as the fortieth
# session did for batch 4's schedule; then session 45's run 10 (tile-splits over the seed schedule). .carry/k45 = HEAD.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r1; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session46/sched-b64-512.csv
L=aa,pre-all:15,mlp-pre:6,pre-all:15+mlp-pre:6,copy:1,copy:2,units:1,units:3,splits:2,early:1,order:1,order:2,attn-lean:1,warps:8,rope:1
L2=aa,tile-alone:56,trigger:16,fixup:1,swiglu-threads:512,swiglu-threads:1024,uploads:1,wide:1,mlp:1,tile-ctas:2,tile-splits:1,tile-splits:3,tile-kt:8,tile-copy:1,aa
for l in 1 2; do
  [ $l = 1 ] && X=$L || X=$L2
  timeout 260 $B/bench_model_cuda --schedule $s --schedule-ab $X --schedule-out $O/b64_$l.csv > $O/b64_$l.txt 2>&1; echo "b64 list $l rc $?"
  grep -E "^schedule|all steps" $O/b64_$l.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab aa,tile-splits:4,tile-splits:3,tile-splits:4 --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp o46r1
