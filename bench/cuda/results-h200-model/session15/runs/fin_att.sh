#!/bin/bash
# session 15 final call (attention): scripts/gpu_check.sh on the final code (tests, memcheck and
# racecheck quick passes, bench-attention with the FA2 / cuDNN anchors: the issue-4 targets)
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final-attention; mkdir -p $L
OUT=$L timeout 500 bash scripts/gpu_check.sh --bin .carry/s15a/bin > $L/console.txt 2>&1; echo "attention check rc $?"
tail -30 $L/console.txt
tar czf $O/final-attention.tgz -C /tmp final-attention
