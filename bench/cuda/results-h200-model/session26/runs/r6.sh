#!/bin/bash
# session 26 run 6: the add + RMSNorm's grid padded with CTAs that wait for the GEMM before it
# and leave (--norm-pad N CTAs; patches/diag_swiglu_spacer_norm_pad.patch), as the SwiGLU
# kernel's 152 CTAs sit between gate/up and down (run 5: a 1-CTA kernel there made batch 4 6%
# slower): separate processes, two rounds, batches 4, 8, 64, pads 0, 152, 264, 528.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26f && tar xJf .carry/s26f/bin.tar.xz -C /tmp/s26f; B=/tmp/s26f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=(0 152 264 528)
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 --batches 4,8,64 --norm-pad ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [--norm-pad ${C[$k]}]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
