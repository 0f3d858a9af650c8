#!/bin/bash
# session 28 run 4: bench/cuda/exp_tile_xreg.cu --xd (x in registers, D stages ahead; weight-only
# rings of S stages) against the backend's tile kernel (ccb8582's library), chains of 36 layers
# of the four projections at 64, 48, 32 rows; twice.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do timeout 200 .carry/s28x/exp_tile_xreg --xd > $O/xd.$r.txt 2>&1 || echo "rc $?"; done
cat $O/xd.0.txt; grep -E "^(M =|ref|xd)" $O/xd.1.txt
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
