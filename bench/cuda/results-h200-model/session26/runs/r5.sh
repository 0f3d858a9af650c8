#!/bin/bash
# session 26 run 5 (a diagnostic, results wrong past mode 0): the SwiGLU op launches its kernel
# (0), an empty kernel of one CTA (1) or of the SwiGLU kernel's grid (2), or nothing (3)
# (patches/diag_swiglu_spacer.patch, --swiglu-diag N): separate processes, two rounds, batches 4
# and 64. Run 3's ablation found the step 7-10% slower without the SwiGLU kernel.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26e && tar xJf .carry/s26e/bin.tar.xz -C /tmp/s26e; B=/tmp/s26e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
N=4
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 --batches 4,64 --swiglu-diag $k > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [--swiglu-diag $k]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
