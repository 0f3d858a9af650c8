#!/bin/bash
# session 12 run 7: exp_tile_xreg and exp_l2_prefetch after the shared-setup refactor (same checks and timings expected)
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/exp_tile_xreg > $O/exp_tile_xreg.txt 2>&1; echo "xreg rc $?"
timeout 120 $B/exp_l2_prefetch > $O/exp_l2_prefetch.txt 2>&1; echo "l2 rc $?"
grep -E "FAILED|^M =|^ref|^wx4|^mix E, c|^check xr6" $O/exp_tile_xreg.txt | head -20
tail -15 $O/exp_l2_prefetch.txt
