#!/bin/bash
# session 27 run 3: the tile GEMM with separate TMA rings for weights and x (ws.tile_ring = 10 SW + SX):
# exp_l2_stream (chains of 36 x 4 projections at 64 and 32 rows: rings, and the streamer), then
# bench_model_cuda decode at batches 4, 32, 64: ed5b096's build (s26a) against this build at its
# default rings (4 + 4, the new layout) and --tile-ring 62 / 54 / 53, separate processes, 2 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27a && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27a/bin.tar.xz -C /tmp/s27a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 60 .carry/s27a/exp_l2_stream 64 2 > $O/x64.txt 2>&1 || echo "x64 rc $?"
timeout 40 .carry/s27a/exp_l2_stream 32 1 > $O/x32.txt 2>&1 || echo "x32 rc $?"
grep -E "check|round" $O/x64.txt | sed 's/  (pacing.*//'; grep round $O/x32.txt | sed 's/  (pacing.*//'
for r in 0 1; do
  for v in base new r62 r54 r53; do
    case $v in base) B=/tmp/s26a/bin/bench_model_cuda; X="";; new) B=/tmp/s27a/bin/bench_model_cuda; X="";;
      r62) B=/tmp/s27a/bin/bench_model_cuda; X="--tile-ring 62";; r54) B=/tmp/s27a/bin/bench_model_cuda; X="--tile-ring 54";;
      r53) B=/tmp/s27a/bin/bench_model_cuda; X="--tile-ring 53";; esac
    timeout 100 $B --only decode --steps 20 --batches 4,32,64 $X > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
