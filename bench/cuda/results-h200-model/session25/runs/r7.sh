#!/bin/bash
# session 25 run 7: batch 4 with batch 8's settings (4 attention splits, k-sliced o/down) and
# its attention CTAs padded to 132 KiB of shared memory, so that, as batch 8's 256 CTAs, nothing
# enters beside them (--attn-smem, a new knob); batch 8 as the reference. Two rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25f && tar xJf .carry/s25f/bin.tar.xz -C /tmp/s25f; B=/tmp/s25f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=("--batches 4" "--batches 4 --attn-splits 4 --kslice 2" "--batches 4 --attn-splits 4 --kslice 2 --attn-smem 132" "--batches 4 --attn-splits 4 --attn-smem 132" "--batches 8")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
