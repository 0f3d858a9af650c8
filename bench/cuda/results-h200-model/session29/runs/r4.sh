#!/bin/bash
# Session 29, run 4: exp_mlp64, down's x waiting per stage on the flags of the CTAs that made its h columns (DEP 2), against the count (DEP 1); one stamped replay of o + fused with flags, twice.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for i in 0 1; do timeout 200 .carry/s29b/exp_mlp64 > $O/mlp.$i.txt 2>&1; echo "rc $?" >> $O/mlp.$i.txt; done
tail -30 $O/mlp.0.txt; tail -30 $O/mlp.1.txt
