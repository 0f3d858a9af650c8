#!/bin/bash
# session 21 run 18: the committed harnesses after moving their shared pieces into
# bench/cuda/exp_chain.cuh: exp_tile_grid and exp_l2_prefetch --bubble-prefetch (the committed library).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64
O=/tmp/o18; mkdir -p $O
mkdir -p /tmp/s21x && tar xJf .carry/s21x/bin.tar.xz -C /tmp/s21x; B=/tmp/s21x
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 100 $B/exp_tile_grid > $O/grid.txt 2>&1 || echo "grid rc $?"
timeout 100 $B/exp_l2_prefetch --bubble-prefetch > $O/pf.txt 2>&1 || echo "pf rc $?"
cat $O/gpu.txt
cat $O/grid.txt | sed 's/; /;\n    /g'
grep -E "bubble.*GEMM after" $O/pf.txt
tar czf ${OUT:-/tmp}/r18.tgz -C $O .
