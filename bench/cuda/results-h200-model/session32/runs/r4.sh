#!/bin/bash
# s32b = s32a with the full-K kernel's x ring as deep as its weight ring (run 3's stamps: 4 x slots
# held qkv at ~20 GB/s a CTA): AUTO 8 + 8 slots (113 KiB, beside one attention CTA), --fullk 3 12 + 10
# (153 KiB). --fullk 1: the tile GEMM. test_cuda_backend, then batch 4 and 64, three rounds, and
# stamped batch-64 steps.
cd "$(dirname "$0")/../../../../.."
for v in s32b; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
for t in test_cuda_backend; do
  timeout 150 /tmp/s32b/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 /tmp/s32b/bin/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run tile.$r 4,64 --fullk 1
  run full.$r 4,64
  run fullp4.$r 64 --fullk-pre 4
  run deep.$r 64 --fullk 3
done
for f in 0 3; do
  timeout 60 /tmp/s32b/bin/bench_diag --only decode --steps 4 --batches 64 --fullk $f --diag-stamps $O/stamps_fk$f.txt > $O/diag_fk$f.txt 2>&1 || echo "diag $f rc $?"
done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
