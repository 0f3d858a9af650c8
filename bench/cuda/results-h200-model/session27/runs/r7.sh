#!/bin/bash
# session 27 run 7: the tile GEMM's TMA stages issued by a producer warp (warp-specialized; consumers
# arrive on per-slot empty barriers, no __syncthreads per stage): test_cuda_backend on it (default),
# then bench_model_cuda decode at batches 4, 32, 64: ed5b096's build against this build's default
# (producer warp) and --tile-ws 1 (the old loop in this build), separate processes, 2 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27d && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27d/bin.tar.xz -C /tmp/s27d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 240 /tmp/s27d/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"
grep -m5 -i "fail" $O/test_cuda_backend.txt
for r in 0 1; do
  for v in base ws old; do
    case $v in base) B=/tmp/s26a/bin/bench_model_cuda; X="";; ws) B=/tmp/s27d/bin/bench_model_cuda; X="";;
      old) B=/tmp/s27d/bin/bench_model_cuda; X="--tile-ws 1";; esac
    timeout 100 $B --only decode --steps 20 --batches 4,32,64 $X > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
