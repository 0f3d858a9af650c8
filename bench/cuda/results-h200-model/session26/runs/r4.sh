#!/bin/bash
# session 26 run 4: the decode attention's ring refilled after each tile is computed, so all three
# stages fly before the first tile (c: two before the PDL wait as now, the third right after it;
# d: all three before the wait). test_cuda_attention (c, d), test_cuda_backend and test_cuda_model
# (c); then separate processes, two rounds, batches 4, 16, 64: ed5b096's build (a), c, d.
cd "$(dirname "$0")/../../../../.."
for d in s26a s26c s26d; do mkdir -p /tmp/$d && tar xJf .carry/$d/bin.tar.xz -C /tmp/$d; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for v in s26c s26d; do timeout 120 /tmp/$v/bin/test_cuda_attention > $O/test_cuda_attention_$v.txt 2>&1; echo "test_cuda_attention $v rc $? $(tail -1 $O/test_cuda_attention_$v.txt)"; grep -m4 "FAIL\|failed:" $O/test_cuda_attention_$v.txt; done
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s26c/bin/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m6 "failed:" $O/$t.txt
done
C=("s26a" "s26c" "s26d")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); v=${C[$k]}
  timeout 60 /tmp/$v/bin/bench_model_cuda --only decode --steps 30 --batches 4,16,64 > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [$v]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
