#!/bin/bash
# Session 30, run 9: s30i = s30h + a knob: the qkv projection (held for the fused MLP, flushed by
# the rope) over all of K as 48-row tiles, one per CTA, in a 121 KiB ring that leaves room for one
# decode-attention CTA, bf16 out (--wide-direct 1): test_cuda_backend; batch 4 and 64 in separate
# processes, two rounds (s29j, s30i, s30i --wide-direct 1); a stamped batch-64 step.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30i; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s30i/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 -i "FAIL" $O/test_cuda_backend.txt
run() { # name binary args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run s29j.$r s29j
  run s30i.$r s30i
  run direct.$r s30i --wide-direct 1
done
timeout 100 /tmp/s30i/bin/bench_diag --only decode --steps 4 --batches 64 --wide-direct 1 --diag-stamps $O/stamps_d.txt > $O/diag_d.txt 2>&1 || echo "diag rc $?"
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
