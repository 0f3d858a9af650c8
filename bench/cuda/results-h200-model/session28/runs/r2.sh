#!/bin/bash
# session 28 run 2: s28d = gate/up past 16 rows (more 128-row tiles than SMs) as two K splits in
# 3-stage 73 KiB CTAs (three per SM), against s28a (ccb8582); batches 16-64, separate processes,
# 3 rounds; s28d's test_cuda_backend and test_cuda_model; a stamped batch-64 step of s28d.
cd "$(dirname "$0")/../../../../.."
for v in s28a s28d s28dd; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1 2; do
  for v in s28a s28d; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,24,32,48,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|24|32|48|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s28dd/bin/bench_model_cuda --only decode --steps 4 --batches 64 --diag-stamps $O/stamps_d.txt > $O/diag_d.txt 2>&1 || echo "diag rc $?"
gzip -f $O/stamps_d.txt
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s28d/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m3 FAIL $O/$t.txt
done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
