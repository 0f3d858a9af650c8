#!/bin/bash
# Session 31, run 7: s31f = s31e + the o projection's residual add + RMSNorm inside the wide
# kernel (--wide-norm 1: a cooperative launch, a grid-wide count after the partials, then each
# row's columns over ctas / rows CTAs, their sums of squares exchanged through L2):
# test_cuda_backend, test_cuda_model; batch 4 and 64 in separate processes, three rounds,
# against s30h and s31f's default; a stamped batch-64 step.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31f; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s31f/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 60 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r s30h
  run f.$r s31f
  run fn.$r s31f --wide-norm 1
done
timeout 60 /tmp/s31f/bin/bench_diag --only decode --steps 4 --batches 64 --wide-norm 1 --diag-stamps $O/stamps_fn.txt > $O/diag_fn.txt 2>&1 || echo "diag rc $?"
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
