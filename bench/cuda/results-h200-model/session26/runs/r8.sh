#!/bin/bash
# session 26 run 8: the decode attention's tile holding the step's new key issued before the PDL
# wait with its old keys (ROPE: the kernel writes the new key's row over the stage itself), its
# raw new K/V rows loaded after the wait (s26h): test_cuda_attention, test_cuda_backend,
# test_cuda_model (PL_CUDA_TEST_BIG), test_cuda_engine; then separate processes, two rounds,
# batches 1, 2, 4, 8 and 64 against the committed build (s26a).
cd "$(dirname "$0")/../../../../.."
for d in s26a s26h; do mkdir -p /tmp/$d && tar xJf .carry/$d/bin.tar.xz -C /tmp/$d; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend test_cuda_engine; do
  timeout 150 /tmp/s26h/bin/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m6 "failed:" $O/$t.txt
done
PL_CUDA_TEST_BIG=1 timeout 150 /tmp/s26h/bin/test_cuda_model > $O/test_cuda_model.txt 2>&1; echo "test_cuda_model (big) rc $? $(tail -1 $O/test_cuda_model.txt)"; grep -m6 "failed:" $O/test_cuda_model.txt
C=("s26a" "s26h")
N=${#C[@]}
for r in 0 1; do for i in $(seq 0 $((N-1))); do k=$(( r ? N - 1 - i : i )); v=${C[$k]}
  timeout 60 /tmp/$v/bin/bench_model_cuda --only decode --steps 30 --batches 1,2,4,8,64 > $O/c$k.$r.txt 2>&1 || echo "c$k rc $?"
  echo "c$k.$r [$v]: $(grep -E '^(1|2|3|4|5|6|8|16|32|64) ' $O/c$k.$r.txt | awk '{printf "B%s %s (%s) ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
