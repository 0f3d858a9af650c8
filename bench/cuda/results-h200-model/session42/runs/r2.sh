#!/bin/bash
# Session 42, run 2: how much of a decode step's wall time is the host's. exp_graph_launch (launch calls and round
# trips of small graphs: memcpy nodes, one copy before the launch, PDL); bench_model_cuda at batches 1, 4, 64 with
# the step breakdown and the new back-to-back relaunch of the last step's graphs (the device alone).
# .carry/v2 = 4718dce + pl_cuda_backend_replay_burst.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v2 && tar xJf .carry/v2/bin.tar.xz -C /tmp/v2; B=/tmp/v2/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
lscpu | grep -E "Model name|^CPU\(s\)|MHz" > $O/cpu.txt
timeout 60 $B/exp_graph_launch > $O/exp_graph_launch.txt 2>&1; echo "exp rc $?"; cat $O/exp_graph_launch.txt
timeout 200 $B/bench_model_cuda --batches 1,4,64 --only decode --steps 20 > $O/bench.txt 2>&1; echo "bench rc $?"
grep -E "^batch|^(1|4|64) " $O/bench.txt
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp or2
