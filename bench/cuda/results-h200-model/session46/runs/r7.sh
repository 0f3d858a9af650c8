#!/bin/bash
# Session 46, run 7: the backend hooks again at batch 64 over uniform contexts 513-552 (sched-b64-512), paired per
# step in one process, now that the decode attention's CTAs no longer rank before their first loads (bb91ead,
# .carry/k46d): does any knob's best setting move?
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46d && tar xJf .carry/k46d/bin.tar.xz -C /tmp/k46d; B=/tmp/k46d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r7; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session46/sched-b64-512.csv
L=aa,pre-all:15,mlp-pre:6,copy:2,units:1,early:1,attn-lean:1,swiglu-threads:1024,fixup:1,uploads:1,tile-kt:8,trigger:16,aa
timeout 260 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/b64.csv > $O/b64.txt 2>&1; echo "b64 rc $?"
grep -E "^schedule|all steps" $O/b64.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp o46r7
