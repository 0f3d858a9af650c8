#!/bin/bash
# session 13 run 3: exp_l2_prefetch --bubble-prefetch (the bubble kernel asks L2 for the next GEMM's weights itself), weights evict_first in the tile GEMM
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch --bubble-prefetch > $O/exp_l2_prefetch.txt 2>&1; echo "rc $?"
cat $O/exp_l2_prefetch.txt
