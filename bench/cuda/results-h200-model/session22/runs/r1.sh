#!/bin/bash
# session 22 run 1: a step's timeline CTA by CTA (a -DPL_DIAG_STAMPS build, bench_model_cuda
# --diag-stamps) at batches 4 and 64, and the committed binary's steps in the same call.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
mkdir -p /tmp/s22a /tmp/s21z && tar xJf .carry/s22a/bin.tar.xz -C /tmp/s22a && tar xJf .carry/s21z/bin.tar.xz -C /tmp/s21z
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s22a/bench_diag --only decode --batches 4,64 --diag-stamps $O/stamps.txt > $O/steps_diag.txt 2>&1 || echo "diag rc $?"
timeout 150 /tmp/s21z/bench_model_cuda --only decode --batches 4,64 > $O/steps_base.txt 2>&1 || echo "base rc $?"
cat $O/gpu.txt
grep -hE "^device|^[0-9]+ +512 " $O/steps_*.txt
grep -c . $O/stamps.txt; grep "^#" $O/stamps.txt
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
