#!/bin/bash
# Session 29, run 7: s29c = the fused MLP in the backend (src/cuda/mlp.cu, AUTO from 40 rows):
# test_cuda_backend (its new test_mlp_fused) and test_cuda_model (its new 48-row fused_mlp_model);
# bench_model_cuda --mlp-ab (forced fused against the three kernels, same process) at batches
# 24-64; s29c against s28a (ccb8582) at batches 4 and 64, separate processes, two rounds.
cd "$(dirname "$0")/../../../../.."
for v in s28a s29c; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 240 /tmp/s29c/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
grep -m3 "fused MLP" $O/test_cuda_model.txt
timeout 150 /tmp/s29c/bin/bench_model_cuda --only decode --steps 20 --batches 24,32,40,48,64 --mlp-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP" $O/mlpab.txt
for r in 0 1; do
  for v in s28a s29c; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,48,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|48|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
