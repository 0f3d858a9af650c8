#!/bin/bash
# Session 29, run 15: s29j --mlp-ab at batch 64 (run 14's separate processes were level with s28a
# on that card), then s28a and s29j once more, separate processes.
cd "$(dirname "$0")/../../../../.."
for v in s28a s29j; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o15; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 100 /tmp/s29j/bin/bench_model_cuda --only decode --steps 20 --batches 64 --mlp-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP" $O/mlpab.txt
for v in s28a s29j; do
  timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 64 > $O/$v.txt 2>&1 || echo "$v rc $?"
  echo "$v: $(grep -E '^(64) ' $O/$v.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done
tar czf ${OUT:-/tmp}/r15.tgz -C $O .
