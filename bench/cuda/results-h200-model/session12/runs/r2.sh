#!/bin/bash
# session 12 run 2: exp_tile_xreg with mixed ring depths
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 240 $B/exp_tile_xreg > $O/exp_tile_xreg.txt 2>&1; echo "exp rc $?"
grep -v "^check" $O/exp_tile_xreg.txt; grep -c "FAILED" $O/exp_tile_xreg.txt
