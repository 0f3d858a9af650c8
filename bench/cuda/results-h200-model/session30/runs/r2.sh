#!/bin/bash
# Session 30, run 2: s30b = s30a + the wide-flush knob (qkv as the wide kernel + a sum of its
# partials): test_cuda_backend; --wide-flush-ab at 64; s30b against s29j at 64 with and without
# the knob, separate processes; stamped batch-64 steps (wide o; wide o + wide qkv).
cd "$(dirname "$0")/../../../../.."
for v in s29j s30b; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s30b/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 -i "FAIL" $O/test_cuda_backend.txt
timeout 120 /tmp/s30b/bin/bench_model_cuda --only decode --steps 20 --batches 64 --wide-flush-ab > $O/flushab.txt 2>&1 || echo "flushab rc $?"
grep "^wide" $O/flushab.txt
for r in 0 1; do
  for v in s29j s30b s30bf; do
    b=${v%f}; extra=""; [ "$v" = s30bf ] && extra="--wide-flush 1"
    timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 $extra > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|56|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s30b/bin/bench_diag --only decode --steps 4 --batches 64 --diag-stamps $O/stamps_wide.txt > $O/diag_wide.txt 2>&1 || echo "diag rc $?"
timeout 100 /tmp/s30b/bin/bench_diag --only decode --steps 4 --batches 64 --wide-flush 1 --diag-stamps $O/stamps_flush.txt > $O/diag_flush.txt 2>&1 || echo "diag2 rc $?"
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
