#!/bin/bash
# session 20 run 6: where run 5's batch-4 failure comes from. The committed code (s20e) through
# the same sequence of batches with an A/B at each (--rope-ab at 1,2,4,8); run 5's build (s20f)
# at batch 4 alone, then again with CUDA_LAUNCH_BLOCKING=1 to name the failing launch.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
for v in s20e s20f; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
timeout 150 /tmp/s20e/bin/bench_model_cuda --only decode --batches 1,2,4,8 --rope-ab > $O/head_rope_ab.txt 2>&1; echo "head rc $?"; grep -E "bench_model_cuda:|^(1|2|4|8) " $O/head_rope_ab.txt
timeout 100 /tmp/s20f/bin/bench_model_cuda --only decode --batches 4 > $O/merge_b4.txt 2>&1; echo "merge b4 rc $?"; grep -E "bench_model_cuda:|^4 " $O/merge_b4.txt
CUDA_LAUNCH_BLOCKING=1 timeout 150 /tmp/s20f/bin/bench_model_cuda --only decode --batches 1,2,4 --attn-merge-ab > $O/merge_blocking.txt 2>&1; echo "merge blocking rc $?"; grep -E "bench_model_cuda:|^(1|2|4) " $O/merge_blocking.txt
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
