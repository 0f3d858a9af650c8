#!/bin/bash
# Session 45, run 4: all four weight stages of the ring sent before the PDL wait instead of three (hook pre-all,
# pl_cuda_backend_tile_pre_all: 1 the k-sliced o projection, 2 k-sliced down, 4 the tile qkv, 8 the tile gate/up).
# o waits behind the attention and its split merge, qkv behind the add + RMSNorm, while the HBM is mostly idle;
# run 3's stamps put o's CTAs 6-8 us ahead of their wait. .carry/k45 = 4a74a68 + --hooks + the hook
# (patches/run4-pre-all-on-4a74a68.diff). test_cuda_backend first (test_tile_pre_all: bit for bit).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or4; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.log)"
grep -i "pre-all" $O/test_cuda_backend.log | head -5
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,pre-all:1,pre-all:2,pre-all:3,pre-all:4,pre-all:8,pre-all:15;; *b8) L=pre-all:1,pre-all:4,pre-all:15;; *) L=pre-all:1,pre-all:15;; esac
  timeout 240 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp or4
