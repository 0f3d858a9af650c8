#!/bin/bash
# Session 29, run 14: s29j = s29i after review (no 2 s trap in the cooperative launch, a fence
# before the exit count, the fallback to three kernels when the cooperative launch is refused,
# mlp_ok and the scratch pointers in the step signature, the tests' copies and fills on the
# backend's stream): the four GPU tests; s29j against s28a at batches 4 and 64, two rounds.
cd "$(dirname "$0")/../../../../.."
for v in s28a s29j; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o14; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 /tmp/s29j/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
for r in 0 1; do
  for v in s28a s29j; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r14.tgz -C $O .
