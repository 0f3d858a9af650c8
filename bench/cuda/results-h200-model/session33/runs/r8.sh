#!/bin/bash
# Run 8: exp_fullk_mc.cu's diagnostics at CS 2 (`.carry/s33c` rebuilt): one release per CTA after a
# named barrier (rel1) instead of one per warp, no PDL, deeper x rings (12 slots).
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp/o8}; mkdir -p $O
timeout 200 .carry/s33c/exp_fullk_mc > $O/exp_fullk_mc.txt 2>&1; echo "rc $?"
cat $O/exp_fullk_mc.txt
