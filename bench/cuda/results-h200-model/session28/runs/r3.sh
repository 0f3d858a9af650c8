#!/bin/bash
# session 28 run 3: past 16 rows, split projections in 3-stage 73 KiB CTAs with K splits aimed at
# two CTAs per SM (at most 8, one cluster): s28f = o and down only (tiles <= SMs / 4: 8 splits,
# 160 CTAs); s28g = also qkv (5 splits, 240 CTAs); against s28a (ccb8582). Batches 24-64,
# separate processes, 3 rounds; s28g's test_cuda_backend and test_cuda_model.
cd "$(dirname "$0")/../../../../.."
for v in s28a s28f s28g; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1 2; do
  for v in s28a s28f s28g; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 24,32,48,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|24|32|48|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s28g/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m3 FAIL $O/$t.txt
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
