#!/bin/bash
# session 12 run 8: exp_tile_xreg --splits: the backend's tile GEMM with other K splits per projection at 64-4 rows
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/exp_tile_xreg --splits > $O/exp_tile_xreg_splits.txt 2>&1; echo "rc $?"
cat $O/exp_tile_xreg_splits.txt
