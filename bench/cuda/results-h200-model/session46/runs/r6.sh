#!/bin/bash
# Session 46, run 6: the decode attention's first two tiles' page ids loaded with the unit's context (one round trip
# before the first K/V copies, not two). .carry/k46f = bb91ead + that change; bench_model_cuda_old = bb91ead's.
# test_cuda_attention; then old and new in separate processes, interleaved: the model benchmark's batch 64 (context
# 512) three rounds, and the seed trace's batch-4 schedule replayed two rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46f && tar xJf .carry/k46f/bin.tar.xz -C /tmp/k46f; B=/tmp/k46f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r6; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 90 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $? $(tail -1 $O/test_cuda_attention.txt)"
for r in 1 2 3; do
  for v in old new; do
    x=$B/bench_model_cuda; [ $v = old ] && x=$B/bench_model_cuda_old
    timeout 90 $x --only decode --batches 64 --steps 20 > $O/b64_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "round $r $v: $(grep -E '^ *64 ' $O/b64_${v}_$r.txt | head -1)"
  done
done
s=$D/session39/seed-trace-steps-cpu.csv
for r in 1 2; do
  for v in old new; do
    x=$B/bench_model_cuda; [ $v = old ] && x=$B/bench_model_cuda_old
    timeout 60 $x --schedule $s > $O/seed_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "seed round $r $v: $(grep -E 'all steps' $O/seed_${v}_$r.txt | sed 's/.*median //')"
  done
done
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp o46r6
