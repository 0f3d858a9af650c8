#!/bin/bash
# session 21 run 12: exp_tile_grid (the committed library): the projections' bytes at 64 and 32
# rows in grids of one wave at two CTAs per SM, one per SM, and two waves, without K splits,
# against the real shapes; chains of 36, PDL, one graph.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o12; mkdir -p $O
mkdir -p /tmp/s21j && tar xJf .carry/s21j/bin.tar.xz -C /tmp/s21j; B=/tmp/s21j
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/exp_tile_grid > $O/grid.txt 2>&1 || echo "grid rc $?"
cat $O/gpu.txt
cat $O/grid.txt | sed 's/; /;\n    /g'
tar czf ${OUT:-/tmp}/r12.tgz -C $O .
