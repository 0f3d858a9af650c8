#!/bin/bash
# session 26 run 2: the MLP's SwiGLU made by the k-sliced down projection from the gate/up output
# (gu seen as half rows, an 8-row box = tokens 0-3's gate and up, SwiGLU on the B fragments; 2-4
# rows): test_cuda_backend (test_matmul_swiglu), test_cuda_model, test_cuda_engine; then separate
# processes, two rounds, batches 2,3,4 in each: ed5b096's build (base), the new build, and the new
# build with the SwiGLU kernel (--swiglu-kernel).
cd "$(dirname "$0")/../../../../.."
for d in s26a s26b; do mkdir -p /tmp/$d && tar xJf .carry/$d/bin.tar.xz -C /tmp/$d; done
A=/tmp/s26a/bin; B=/tmp/s26b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 150 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m6 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
C=("$A --batches 2,3,4" "$B --batches 2,3,4" "$B --batches 2,3,4 --swiglu-kernel")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); set -- ${C[$k]}; v=$1; shift
  timeout 60 $v/bench_model_cuda --only decode --steps 30 "$@" > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [${C[$k]#/tmp/}]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
