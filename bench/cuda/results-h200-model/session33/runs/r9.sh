#!/bin/bash
# Run 9: exp_fullk_mc.cu with the release modes 2 and 3 (`.carry/s33c` rebuilt): a cluster launch whose CTAs load
# their own x (no multicast), and rank 0 issuing every slice; with and without PDL.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp/o9}; mkdir -p $O
timeout 200 .carry/s33c/exp_fullk_mc > $O/exp_fullk_mc.txt 2>&1; echo "rc $?"
cat $O/exp_fullk_mc.txt
