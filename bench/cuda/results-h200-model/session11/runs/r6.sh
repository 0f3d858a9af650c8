#!/bin/bash
# session 11 run 6: exp_l2_prefetch, the preloading projection with 16 warps and an mbarrier per row and a 32 KiB bubble
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run6_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run6_l2_prefetch.txt
