#!/bin/bash
# Session 31, run 2: s31b = s31a with the bf16 partials' norm issuing every raw load before any
# conversion (run 1's bf16 form converted as it loaded) and a knob for the fused MLP's weight
# stages before its PDL wait (--mlp-pre N; 6 = the whole ring, as committed): test_cuda_backend;
# batch 64 (and 4) in separate processes, two rounds, against s30h; stamped batch-64 steps.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31b; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s31b/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"
grep -m8 -i "FAIL" $O/test_cuda_backend.txt
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run base.$r s30h
  run b.$r s31b
  run pbf.$r s31b --parts-bf16 1
  run pre1.$r s31b --mlp-pre 1
  run pre3.$r s31b --mlp-pre 3
  run pbfpre3.$r s31b --parts-bf16 1 --mlp-pre 3
done
timeout 100 /tmp/s31b/bin/bench_diag --only decode --steps 4 --batches 64 --diag-stamps $O/stamps_b.txt > $O/diag_b.txt 2>&1 || echo "diag rc $?"
timeout 100 /tmp/s31b/bin/bench_diag --only decode --steps 4 --batches 64 --parts-bf16 1 --diag-stamps $O/stamps_pbf.txt > $O/diag_pbf.txt 2>&1 || echo "diag2 rc $?"
timeout 100 /tmp/s31b/bin/bench_diag --only decode --steps 4 --batches 64 --mlp-pre 1 --diag-stamps $O/stamps_pre1.txt > $O/diag_pre1.txt 2>&1 || echo "diag3 rc $?"
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
