#!/bin/bash
# session 11 run 8: exp_l2_prefetch, the preloading projection on tensor cores (m16n8k16, 16 warps over K)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run8_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run8_l2_prefetch.txt
