#!/bin/bash
# Session 30, run 7: s30g = s30f + the qkv GEMM as the wide kernel whose partials the decode
# attention adds as it reads q, k and v (--wide-qkv 1: 168 KiB ring, 2: 124 KiB):
# test_cuda_backend, test_cuda_model (wide o + qkv against the tile GEMMs on two synthetic
# models); batch 4 and 64 in separate processes, two rounds; a stamped batch-64 step.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30g; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 200 /tmp/s30g/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
grep "launches" $O/test_cuda_model.txt
run() { # name binary args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run s29j.$r s29j
  run auto.$r s30g
  run qkv1.$r s30g --wide-qkv 1
  run qkv2.$r s30g --wide-qkv 2
done
timeout 100 /tmp/s30g/bin/bench_diag --only decode --steps 4 --batches 64 --wide-qkv 2 --diag-stamps $O/stamps_q2.txt > $O/diag_q2.txt 2>&1 || echo "diag rc $?"
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
