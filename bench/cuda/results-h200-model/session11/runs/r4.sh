#!/bin/bash
# session 11 run 4: exp_l2_prefetch (does a projection after a latency-bound stretch get faster when its weights were prefetched into L2 during it?)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run4_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run4_l2_prefetch.txt
