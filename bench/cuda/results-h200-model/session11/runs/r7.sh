#!/bin/bash
# session 11 run 7: exp_l2_prefetch, default and largest shared-memory carveout for the bubble and the preloading projection
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run7_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run7_l2_prefetch.txt
