#!/bin/bash
# session 28 run 23: bench/cuda/exp_persist64.cu (the 64-row projection chain as one persistent
# kernel): the committed form after the review (checked variants marked in the table, shared
# GEMM-end count); twice.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o23; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do timeout 60 .carry/s28p/exp_persist64 > $O/p.$r.txt 2>&1; echo "rc $?"; done
cat $O/p.0.txt; tail -8 $O/p.1.txt
tar czf ${OUT:-/tmp}/r23.tgz -C $O .
