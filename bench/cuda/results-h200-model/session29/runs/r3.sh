#!/bin/bash
# Session 29, run 3: exp_mlp64 with x rings of 6-8 and one stamped replay of o + fused (per-CTA phase times), twice.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for i in 0 1; do timeout 200 .carry/s29b/exp_mlp64 > $O/mlp.$i.txt 2>&1; echo "rc $?" >> $O/mlp.$i.txt; done
tail -32 $O/mlp.0.txt; tail -32 $O/mlp.1.txt
