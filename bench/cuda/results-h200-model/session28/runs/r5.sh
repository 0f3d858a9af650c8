#!/bin/bash
# session 28 run 5: bench/cuda/exp_tile_xreg.cu --mix: 5-stage (121 KiB) rings for the split o and
# down only, the backend's kernel (mix F) or its 4-stage re-write (mix G) for qkv and gate_up, with
# and without the largest carveout; chains of 36 layers at 64 and 48 rows; three times.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1 2; do timeout 200 .carry/s28x/exp_tile_xreg --mix > $O/mix.$r.txt 2>&1 || echo "rc $?"; done
cat $O/mix.0.txt; grep -E "^(M =|ref|mix)" $O/mix.1.txt $O/mix.2.txt
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
