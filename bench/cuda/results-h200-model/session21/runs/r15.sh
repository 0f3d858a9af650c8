#!/bin/bash
# session 21 run 15: the balanced (stream-K) tile GEMM grid past 16 rows: one CTA per SM over
# equal shares of (tile, 64-k) units; now every shared part kept to the CTA's end (one fence), the
# last CTA of a tile adding the parts; at most 128 registers (two CTAs per SM fit, as the
# tile kernel's), the parts added one CTA at a time.
# (a) exp_tile_grid with the balanced grid beside the default one (and checked against it);
# (b) --tile-balance-ab in the step, batches 64 and 32.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o15; mkdir -p $O
mkdir -p /tmp/s21m && tar xJf .carry/s21m/bin.tar.xz -C /tmp/s21m; B=/tmp/s21m
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/exp_tile_grid > $O/grid.txt 2>&1 || echo "grid rc $?"
timeout 250 $B/bench_model_cuda --only decode --batches 64,32 --tile-balance-ab > $O/bal.txt 2>&1 || echo "bal rc $?"
cat $O/gpu.txt
cat $O/grid.txt | sed 's/; /;\n    /g' | grep -E "^M|real shape|1/SM"
grep -E "round|^[0-9]+ +[0-9]+ " $O/bal.txt
tar czf ${OUT:-/tmp}/r15.tgz -C $O .
