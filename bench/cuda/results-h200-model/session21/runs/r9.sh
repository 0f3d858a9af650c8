#!/bin/bash
# session 21 run 9: the committed code (no change this session) on this session's card:
# bench_model_cuda decode steps at batches 1, 4, 64, twice.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o9; mkdir -p $O
mkdir -p /tmp/s21z && tar xJf .carry/s21z/bin.tar.xz -C /tmp/s21z; B=/tmp/s21z
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for k in 1 2; do timeout 150 $B/bench_model_cuda --only decode --batches 1,4,64 > $O/steps_$k.txt 2>&1 || echo "steps $k rc $?"; done
cat $O/gpu.txt
grep -hE "^device|^[0-9]+ +512 " $O/steps_*.txt
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
