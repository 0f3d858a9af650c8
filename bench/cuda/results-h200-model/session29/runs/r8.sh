#!/bin/bash
# Session 29, run 8: s29d = s29c with the fused MLP stamped in the diagnostic build, a shallower-
# ring form (5 + 3 slots, 125 KiB) and test_cuda_backend's SwiGLU check within a rounding where
# the tile GEMM splits K: the tests; --mlp-ab and --mlp-ring-ab at batches 40-64; one stamped
# batch-64 step with the fused MLP (AUTO) and one with the three kernels.
cd "$(dirname "$0")/../../../../.."
for v in s29d; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 240 /tmp/s29d/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 -i "FAIL" $O/test_cuda_backend.txt
timeout 150 /tmp/s29d/bin/bench_model_cuda --only decode --steps 20 --batches 40,48,56,64 --mlp-ab --mlp-ring-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP" $O/mlpab.txt
timeout 100 /tmp/s29d/bin/bench_diag --only decode --steps 4 --batches 64 --diag-stamps $O/stamps_fused.txt > $O/diag_fused.txt 2>&1 || echo "diag rc $?"
timeout 100 /tmp/s29d/bin/bench_diag --only decode --steps 4 --batches 64 --mlp 1 --diag-stamps $O/stamps_three.txt > $O/diag_three.txt 2>&1 || echo "diag3 rc $?"
python3 bench/cuda/diag_timeline.py $O/stamps_fused.txt > $O/timeline_fused.txt 2>&1; python3 bench/cuda/diag_timeline.py $O/stamps_three.txt > $O/timeline_three.txt 2>&1
gzip -f $O/stamps_*.txt
head -30 $O/timeline_fused.txt
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
