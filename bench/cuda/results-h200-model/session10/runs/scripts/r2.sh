#!/bin/bash
# session 10 run 2: where the batch-4 and batch-64 steps go now (ablation), and the decode attention alone at the step's shapes
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 100 stdbuf -oL $B/pagellm bench-attention --device cuda --only decode --decode-shapes 4x640,64x640,4x768,64x768,64x512 --iters 200 > $O/run2_attention.txt 2>&1; echo "attention rc $?"
grep -E "decode-mma |decode-mma-cpasync|decode-mma-tma" $O/run2_attention.txt | head -40
timeout 200 stdbuf -oL $B/bench_model_cuda --only decode --batches 4,64 --steps 15 --ablate > $O/run2_ablate.txt 2>&1; echo "ablate rc $?"
grep -E "ablation|^(4|64) " $O/run2_ablate.txt | cut -c1-120
