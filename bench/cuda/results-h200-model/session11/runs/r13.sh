#!/bin/bash
# session 11 run 13: the decode attention's CTA width, AUTO (8 warps when the units are no more than the SMs) against 4 warps, now that old keys go out before the PDL wait
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s11/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 250 stdbuf -oL $B/bench_model_cuda --only decode --batches 1,4,8,16 --steps 15 --attn-warps-ab > $O/run13_warps.txt 2>&1; echo "bench rc $?"
grep -E "^attention CTA width|^(1|4|8|16) |^device" $O/run13_warps.txt | cut -c1-110
