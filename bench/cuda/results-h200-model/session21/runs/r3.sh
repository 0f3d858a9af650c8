#!/bin/bash
# session 21 run 3: where a step's remaining small costs sit. --ablate (now also without the
# attention's split merge kernel: results wrong, timing real) and --graph-segments-ab (the
# step graph in 1-4 segments: the host walk is ~3-6 us since the eighteenth session) at
# batches 2, 4 and 64.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
mkdir -p /tmp/s21c && tar xJf .carry/s21c/bin.tar.xz -C /tmp/s21c; B=/tmp/s21c
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 250 $B/bench_model_cuda --only decode --batches 2,4,64 --ablate --graph-segments-ab > $O/abl.txt 2>&1 || echo "abl rc $?"
cat $O/gpu.txt
grep -E "^ablation|segments|^[0-9]+ +[0-9]+ " $O/abl.txt | sed -E 's/ \(means over 21 replays\)//'
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
