#!/bin/bash
# session 25 run 6: balanced-row k-sliced tiles with 4 (--kslice 4, 128 KiB) and 6 (--kslice 5, 192 KiB)
# ring stages against AUTO (batch 4: split tile kernel; 6-8: 16-row k-sliced tiles) and the
# 16-row k-sliced tiles at batch 4 (--kslice 2); test_cuda_backend (passes 4 and 6 take them).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25e && tar xJf .carry/s25e/bin.tar.xz -C /tmp/s25e; B=/tmp/s25e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m6 -i "fail" $O/test_cuda_backend.txt | grep -v " 0 failed"
C=("model_cuda --batches 4" "model_cuda --batches 4 --kslice 4" "model_cuda --batches 4 --kslice 5" "model_cuda --batches 4 --kslice 2" "model_cuda --batches 8" "model_cuda --batches 8 --kslice 4" "model_cuda --batches 8 --kslice 5")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); set -- ${C[$k]}; v=$1; shift
  timeout 60 $B/bench_$v --only decode --steps 30 "$@" > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
