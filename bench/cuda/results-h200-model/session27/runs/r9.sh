#!/bin/bash
# session 27 run 9: SwiGLU with 8 elements per thread from 16 rows (build s27f; at batch 64 the old
# grid of 2432 CTAs x 256 threads filled every SM's threads, so the down projection's CTAs could not
# enter before its end): test_cuda_backend, test_cuda_model; decode steps at batches 4, 16, 32, 64
# against ed5b096's build (s26a), separate processes, 3 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27f && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27f/bin.tar.xz -C /tmp/s27f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 240 /tmp/s27f/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m3 "FAIL" $O/$t.txt
done
for r in 0 1 2; do
  for v in s26a s27f; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,16,32,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
