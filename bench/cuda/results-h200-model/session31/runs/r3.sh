#!/bin/bash
# Session 31, run 3: s31c = s31b + the wide kernel's ring forms (--wide-ring 1/2/3: 8 weight
# slots, a split's whole K range of o before its PDL wait, with 6/4/2 x slots) and the fused
# MLP with 8 weight slots (--mlp-deep 1): test_cuda_backend, test_cuda_model; batch 64 (and 4)
# in separate processes, two rounds, against s30h; stamped batch-64 steps.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31c; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 200 /tmp/s31c/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run base.$r s30h
  run c.$r s31c
  run ring1.$r s31c --wide-ring 1
  run ring2.$r s31c --wide-ring 2
  run ring3.$r s31c --wide-ring 3
  run deep.$r s31c --mlp-deep 1
  run pre3.$r s31c --mlp-pre 3
  run r1p3.$r s31c --wide-ring 1 --mlp-pre 3
  run r1deep.$r s31c --wide-ring 1 --mlp-deep 1
done
timeout 100 /tmp/s31c/bin/bench_diag --only decode --steps 4 --batches 64 --wide-ring 1 --diag-stamps $O/stamps_ring1.txt > $O/diag_ring1.txt 2>&1 || echo "diag rc $?"
timeout 100 /tmp/s31c/bin/bench_diag --only decode --steps 4 --batches 64 --mlp-deep 1 --diag-stamps $O/stamps_deep.txt > $O/diag_deep.txt 2>&1 || echo "diag2 rc $?"
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
