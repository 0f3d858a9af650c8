#!/bin/bash
# session 11 run 5: exp_l2_prefetch with the preloading projection (its whole weight share in shared memory before the PDL wait) and a 32 KiB bubble
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run5_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run5_l2_prefetch.txt
