#!/bin/bash
# session 11 run 9: exp_l2_prefetch with the row-ownership streaming GEMM (rows_gemv, 4- and 8-slot rings) on the four projections
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 $B/exp_l2_prefetch > $O/run9_l2_prefetch.txt 2>&1; echo "rc $?"; cat $O/run9_l2_prefetch.txt
