#!/bin/bash
# Session 29, run 5: exp_mlp64 with the backend at 64, 48 and 32 token rows (the fused kernel
# always runs 64), once each.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 64 48 32; do timeout 200 .carry/s29b/exp_mlp64 36 $r > $O/mlp.$r.txt 2>&1; echo "rc $?" >> $O/mlp.$r.txt; done
for r in 64 48 32; do sed -n '2p' $O/mlp.$r.txt; grep -A13 "layers at" $O/mlp.$r.txt; done
