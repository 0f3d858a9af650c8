#!/bin/bash
# Session 29, run 9: s29e = the fused MLP with its benchmark knobs (pl_cuda_backend_mlp_tune: a
# plain launch instead of a cooperative one, down in 80-row tiles x 4 K splits, the partials'
# norm in 1 or 2 CTAs per row): test_cuda_backend; each knob A/B'd against the defaults
# (forced fused MLP) at batches 48 and 64, separate processes; --mlp-ab once more.
cd "$(dirname "$0")/../../../../.."
for v in s29e; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 240 /tmp/s29e/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 -i "FAIL" $O/test_cuda_backend.txt
for t in 1,0,0 0,1,0 0,0,1 0,0,2; do
  timeout 100 /tmp/s29e/bin/bench_model_cuda --only decode --steps 20 --batches 48,64 --mlp-tune-ab $t > $O/tune_$t.txt 2>&1 || echo "tune $t rc $?"
  echo "== tune $t"; grep "^MLP tune" $O/tune_$t.txt | awk '{print $3, $5, $7, $8, $10}' | paste -sd' ' | fold -w 200
done
timeout 100 /tmp/s29e/bin/bench_model_cuda --only decode --steps 20 --batches 48,64 --mlp-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP:" $O/mlpab.txt | awk '{print $3, $5, $7, $8, $10}' | paste -sd' ' | fold -w 200
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
