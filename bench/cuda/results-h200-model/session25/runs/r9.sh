#!/bin/bash
# session 25 run 9: the k-sliced tiles' x boxes kept in range below 8 rows (x readable to 8 rows
# inside its allocation: ws->x_rows), and AUTO from 2 rows where they are: test_cuda_backend
# (pass 0 holds x in 8-row allocations, NaN past M), then separate processes, two rounds, at
# 2, 4 and 6 against HEAD's build (bench_base).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s25i && tar xJf .carry/s25i/bin.tar.xz -C /tmp/s25i; B=/tmp/s25i
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 150 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m6 -i "fail" $O/test_cuda_backend.txt | grep -v " 0 failed"
C=("base --batches 4" "model_cuda --batches 4" "base --batches 2" "model_cuda --batches 2" "base --batches 6" "model_cuda --batches 6")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); set -- ${C[$k]}; v=$1; shift
  timeout 40 $B/bench_$v --only decode --steps 30 "$@" > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]}]: $(grep -E '^(1|2|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) roof %s", $1, $3, $6, $5}')"
done; done
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
