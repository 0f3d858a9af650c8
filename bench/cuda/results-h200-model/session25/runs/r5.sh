#!/bin/bash
# session 25 run 5: k-sliced tiles with balanced rows per CTA (R = ceil(N / SMs): 20 rows, 128
# CTAs, one per SM at N = 2560) instead of 16 (160 CTAs: 28 SMs stream two CTAs' rows), with 3
# (96 KiB) or 4 (128 KiB) ring stages: test_cuda_backend (test_matmul passes 4 and 6 take them),
# then separate processes, two rounds: --kslice 3 / 4 against AUTO and HEAD's build.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25d && tar xJf .carry/s25d/bin.tar.xz -C /tmp/s25d; B=/tmp/s25d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m6 -i "fail" $O/test_cuda_backend.txt | grep -v " 0 failed"
C=("base --batches 4" "model_cuda --batches 4" "model_cuda --batches 4 --kslice 3" "model_cuda --batches 4 --kslice 4" "model_cuda --batches 8 --kslice 3" "model_cuda --batches 8" "model_cuda --batches 2 --kslice 3" "model_cuda --batches 2")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); set -- ${C[$k]}; v=$1; shift
  timeout 60 $B/bench_$v --only decode --steps 30 "$@" > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
