#!/bin/bash
# Session 30, run 1: s30a = the o projection of 57-64 rows as the fused MLP's phase 2 alone
# (pl_cuda_wide_bf16, AUTO): test_cuda_backend (test_wide_proj) and test_cuda_model; --wide-ab
# and --wide-form-ab at 64 and 60; s30a against s29j (the committed code) at 4 and 64, separate processes.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30a; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 200 /tmp/s30a/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
timeout 120 /tmp/s30a/bin/bench_model_cuda --only decode --steps 20 --batches 60,64 --wide-ab --wide-form-ab > $O/wideab.txt 2>&1 || echo "wideab rc $?"
grep "^wide" $O/wideab.txt
for r in 0 1; do
  for v in s29j s30a; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|56|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
