#!/bin/bash
# Run 7: bench/cuda/exp_fullk_mc.cu (built on the dev VM, `.carry/s33c`): 64-row full-K
# projections with x multicast across clusters of 1-8 CTAs, against the library's full-K kernel
# and the wide kernel + partials' sum, at Qwen3-4B's qkv and o shapes.
cd "$(dirname "$0")/../../../../.."
O=${OUT:-/tmp/o7}; mkdir -p $O
timeout 200 .carry/s33c/exp_fullk_mc > $O/exp_fullk_mc.txt 2>&1; echo "rc $?"
cat $O/exp_fullk_mc.txt
