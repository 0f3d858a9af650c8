#!/bin/bash
# session 26 run 7: the SwiGLU kernel's grid sized to about N CTAs (--swiglu-ctas N; today 38 per
# row: 38, 76, 152 CTAs at batches 1, 2, 4), since run 5 found the kernel's width between gate/up
# and down worth 6% at batch 4 (1 CTA against its 152): separate processes, two rounds, batches
# 1, 2, 4, N = 0 (the rule), 152, 264, 528.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26g && tar xJf .carry/s26g/bin.tar.xz -C /tmp/s26g; B=/tmp/s26g/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=(0 152 264 528)
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 --batches 1,2,4 --swiglu-ctas ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [--swiglu-ctas ${C[$k]}]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
