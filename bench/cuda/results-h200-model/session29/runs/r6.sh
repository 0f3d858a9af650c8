#!/bin/bash
# Session 29, run 6: exp_mlp64's padded form (gate/up from the plain weight as two 76-row boxes
# into a 160-row tile, no interleaved copy) against the interleaved one; 64 rows twice, 48 once;
# one stamped replay of o + the padded form.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp}/r6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 64 64b 48; do timeout 200 .carry/s29b/exp_mlp64 36 ${r%b} > $O/mlp.$r.txt 2>&1; echo "rc $?" >> $O/mlp.$r.txt; done
for r in 64 64b 48; do head -5 $O/mlp.$r.txt | grep check; grep -A12 "layers at" $O/mlp.$r.txt; done; tail -14 $O/mlp.64.txt
