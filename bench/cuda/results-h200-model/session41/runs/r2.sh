#!/bin/bash
# Session 41, run 2: the held qkv GEMM's K splits added by the decode attention (qkv-parts; AUTO on, 1 = never):
# test_cuda_backend (its new qkv_parts_case: bit-identical to the GEMM adding them) and test_cuda_model, then paired
# A/Bs (qkv-parts:1 on/off: above 1 the partials in the attention are faster) over the seed trace's batch-4 schedule
# and session 40's synthetic schedules at batches 2, 8, 16; one process of the seed trace. .carry/b2 = b1 + the change.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/b2 && tar xJf .carry/b2/bin.tar.xz -C /tmp/b2; B=/tmp/b2/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or2; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
date +%T; timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
grep -i "qkv partials" $O/test_cuda_backend.log | head -5
date +%T; timeout 150 $B/test_cuda_model > $O/test_cuda_model.log 2>&1; echo "test_cuda_model rc $?: $(tail -1 $O/test_cuda_model.log)"
date +%T
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b2.csv $D/session40/sched-b8.csv $D/session40/sched-b16.csv; do
  n=$(basename $s .csv)
  L=aa,qkv-parts:1,aa; [ $n = seed-trace-steps-cpu ] && L=aa,qkv-parts:1,aa,qkv-parts:1
  timeout 100 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
date +%T; timeout 60 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --steps-csv $O/steps.seed > $O/seed.txt 2>&1; echo "seed rc $?: $(grep -E '^full-batch decode step / its' $O/seed.txt)"
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp or2
