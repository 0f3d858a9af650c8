#!/bin/bash
# Session 29, run 1: exp_mlp64 (the batch-64 MLP as one kernel, one CTA per SM) against the
# backend's gate/up + SwiGLU + down, twice in separate processes.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for i in 0 1; do timeout 200 .carry/s29a/exp_mlp64 > $O/mlp.$i.txt 2>&1; echo "rc $?" >> $O/mlp.$i.txt; done
tail -12 $O/mlp.0.txt; tail -12 $O/mlp.1.txt
