#!/bin/bash
# session 21 run 13: the balanced (stream-K) tile GEMM grid past 16 rows: one CTA per SM over
# equal shares of (tile, 64-k) units, shared tiles' partials added by their last CTA.
# (a) exp_tile_grid with the balanced grid beside the default one (and checked against it);
# (b) --tile-balance-ab in the step, batches 64, 32, 48, 20; (c) test_cuda_backend (default path).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o13; mkdir -p $O
mkdir -p /tmp/s21k && tar xJf .carry/s21k/bin.tar.xz -C /tmp/s21k; B=/tmp/s21k
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/exp_tile_grid > $O/grid.txt 2>&1 || echo "grid rc $?"
timeout 250 $B/bench_model_cuda --only decode --batches 64,32,48,20 --tile-balance-ab > $O/bal.txt 2>&1 || echo "bal rc $?"
timeout 60 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?"; tail -1 $O/test_cuda_backend.log
cat $O/gpu.txt
cat $O/grid.txt | sed 's/; /;\n    /g' | grep -E "^M|real shape|1/SM"
grep -E "round|^[0-9]+ +[0-9]+ " $O/bal.txt
tar czf ${OUT:-/tmp}/r13.tgz -C $O .
