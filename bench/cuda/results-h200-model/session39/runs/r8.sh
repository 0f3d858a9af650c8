#!/bin/bash
# Session 39, run 8 (first run of bench_model_cuda --schedule): the seed trace's 233 batch-4 steps
# (../seed-trace-steps-cpu.csv) replayed in order, plain and as paired A/Bs (rope kernel; 6 splits), beside
# one process of the seed trace itself on the same card. .carry/k1 = the code as committed after the session.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k1 && tar xJf .carry/k1/bin.tar.xz -C /tmp/k1; B=/tmp/k1/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or8; mkdir -p $O; S=bench/cuda/results-h200-model/session39/seed-trace-steps-cpu.csv
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 40 $B/bench_model_cuda --schedule $S --schedule-out $O/replay.csv > $O/replay.txt 2>&1; echo "replay rc $?"; tail -4 $O/replay.txt
timeout 40 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --steps-csv $O/steps.seed > $O/seed.txt 2>&1; echo "seed rc $?: $(grep -E '^full-batch decode step / its' $O/seed.txt)"
timeout 40 $B/bench_model_cuda --schedule $S --schedule-ab rope --schedule-out $O/replay.rope.csv > $O/replay.rope.txt 2>&1; echo "rope rc $?"; tail -3 $O/replay.rope.txt
timeout 40 $B/bench_model_cuda --schedule $S --schedule-ab splits:6 --schedule-out $O/replay.s6.csv > $O/replay.s6.txt 2>&1; echo "splits:6 rc $?"; tail -3 $O/replay.s6.txt
tar czf ${OUT:-/tmp}/r8.tgz -C /tmp or8
