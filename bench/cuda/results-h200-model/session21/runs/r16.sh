#!/bin/bash
# session 21 run 16: a row-balanced grid past 16 rows for gate_up and qkv: one wave of a CTA
# per SM, CTA c owning weight rows [16 U c / G, 16 U (c + 1) / G) over all of K (no split, no
# partials), wgmma with the tokens as A and each warpgroup's share of rows as B.
# (a) exp_tile_grid with the row-balanced grid beside the tile grid (checked against it);
# (b) --tile-rows-ab in the step, batches 64, 32, 48.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o16; mkdir -p $O
mkdir -p /tmp/s21n && tar xJf .carry/s21n/bin.tar.xz -C /tmp/s21n; B=/tmp/s21n
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/exp_tile_grid > $O/grid.txt 2>&1 || echo "grid rc $?"
timeout 250 $B/bench_model_cuda --only decode --batches 64,32,48 --tile-rows-ab > $O/rows.txt 2>&1 || echo "rows rc $?"
cat $O/gpu.txt
cat $O/grid.txt | sed 's/; /;\n    /g'
grep -E "round|^[0-9]+ +[0-9]+ |rror" $O/rows.txt
tar czf ${OUT:-/tmp}/r16.tgz -C $O .
