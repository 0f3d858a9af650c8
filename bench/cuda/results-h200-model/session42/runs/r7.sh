#!/bin/bash
# Session 42, run 7: the code as committed (.carry/f42): paired A/Bs of the copy nodes (uploads:1) against the step
# arena over the seed trace's batch-4 schedule, then the full check (test_cuda_attention, scripts/gpu_model_check.sh
# --serving: the CUDA tests, memcheck, the model benchmark, the seed trace in all three KV modes against transformers,
# the heavy trace, prefill chunks against cuBLAS).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f42 && tar xJf .carry/f42/bin.tar.xz -C /tmp/f42; B=/tmp/f42/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model $L/ab
D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $L/ab/gpu.txt 2>&1
s=$D/session39/seed-trace-steps-cpu.csv; n=$(basename $s .csv)
timeout 60 $B/bench_model_cuda --schedule $s --schedule-ab ${AB:-aa,uploads:1} --schedule-out $L/ab/$n.csv > $L/ab/$n.txt 2>&1; echo "$n rc $?"
grep -E "^schedule|all steps" $L/ab/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
tar czf $O/r7ab.tgz -C $L ab
timeout 90 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 400 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone|^batch [0-9]+: (step|the last)" $L/model/bench_model_cuda.txt
tar czf $O/r7.tgz -C $L model
