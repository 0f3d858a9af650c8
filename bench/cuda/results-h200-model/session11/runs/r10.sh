#!/bin/bash
# session 11 run 10: exp_l2_prefetch as committed (timing and checks in shared helpers), a rerun of run 9
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run10_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run10_l2_prefetch.txt
