#!/bin/bash
# session 27 run 5: smaller tile-GEMM CTAs through the separate TMA rings (run 3's build, --tile-ring):
# 3 + 3 (73 KiB at 64 rows: three CTAs per SM), 4 + 2 (81 KiB), 3 + 2 (65 KiB), against the build's
# default 4 + 4 (97 KiB) and ed5b096's build, batches 4, 32, 64, separate processes, 2 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27a && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27a/bin.tar.xz -C /tmp/s27a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do
  for v in base new r33 r42 r32; do
    case $v in base) B=/tmp/s26a/bin/bench_model_cuda; X="";; new) B=/tmp/s27a/bin/bench_model_cuda; X="";;
      *) B=/tmp/s27a/bin/bench_model_cuda; X="--tile-ring ${v#r}";; esac
    timeout 100 $B --only decode --steps 20 --batches 4,32,64 $X > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
