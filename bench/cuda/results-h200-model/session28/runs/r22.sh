#!/bin/bash
# session 28 run 22: bench/cuda/exp_persist64.cu (the 64-row projection chain as one persistent
# kernel): x written into the ring by eight x-writer warps straight from the GEMM before's f32
# sums (SwiGLU where it is gate/up), no conversion step: one meeting per boundary; twice.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o22; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do timeout 60 .carry/s28p/exp_persist64 > $O/p.$r.txt 2>&1; echo "rc $?"; done
cat $O/p.0.txt; tail -8 $O/p.1.txt
tar czf ${OUT:-/tmp}/r22.tgz -C $O .
