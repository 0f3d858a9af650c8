#!/bin/bash
# Session 41, run 6: the code as committed (the tile GEMM's split fixup arriving by one acq_rel atomic from 3 rows, AUTO):
# paired A/Bs of the old arrival (fixup:1, fences) against it over the seed trace's batch-4 schedule and session 40's
# batch-2 schedule; then the full check (test_cuda_attention, scripts/gpu_model_check.sh --serving, which runs
# test_cuda_backend with the new test_tile_fixup). .carry/f1 = the committed code.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f1 && tar xJf .carry/f1/bin.tar.xz -C /tmp/f1; B=/tmp/f1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model $L/ab
D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $L/ab/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  timeout 80 $B/bench_model_cuda --schedule $s --schedule-ab aa,fixup:1,aa --schedule-out $L/ab/$n.csv > $L/ab/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps" $L/ab/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
tar czf $O/r6ab.tgz -C $L ab
timeout 90 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 380 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone" $L/model/bench_model_cuda.txt
tar czf $O/r6.tgz -C $L model
