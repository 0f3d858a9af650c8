#!/bin/bash
# Session 29, run 2: exp_mlp64 ring sweep (W 4-8 slots, x 2-4), no-MMA diagnostic, twice.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for i in 0 1; do timeout 200 .carry/s29b/exp_mlp64 > $O/mlp.$i.txt 2>&1; echo "rc $?" >> $O/mlp.$i.txt; done
tail -16 $O/mlp.0.txt; tail -16 $O/mlp.1.txt
