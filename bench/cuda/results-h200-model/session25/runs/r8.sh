#!/bin/bash
# session 25 run 8 (a diagnostic): the GEMMs' x tensor maps given 16 rows (8 for k-sliced tiles)
# at batch 4, so no x box has out-of-range rows (--tile-copy 3; rows past 4 read other
# activations, their outputs never stored): AUTO and k-sliced, two rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25h && tar xJf .carry/s25h/bin.tar.xz -C /tmp/s25h; B=/tmp/s25h
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
C=("--batches 4" "--batches 4 --tile-copy 3" "--batches 4 --kslice 2" "--batches 4 --kslice 2 --tile-copy 3")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i ))
  timeout 60 $B/bench_model_cuda --only decode --steps 30 ${C[$k]} > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
