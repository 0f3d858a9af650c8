#!/bin/bash
# session 27 run 6: which part of the separate-ring layout costs 5% at 32-64 rows (run 3, 5): --tile-ring 100 * ORD + 44,
# ORD 1 weights before x in refills, 2 also the old order after the wait, 3 that and one barrier per stage;
# against the build's default (ORD 0) and ed5b096's build, batches 4, 32, 64, separate processes, 2 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27c && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27c/bin.tar.xz -C /tmp/s27c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do
  for v in base new r144 r244 r344; do
    case $v in base) B=/tmp/s26a/bin/bench_model_cuda; X="";; new) B=/tmp/s27c/bin/bench_model_cuda; X="";;
      *) B=/tmp/s27c/bin/bench_model_cuda; X="--tile-ring ${v#r}";; esac
    timeout 100 $B --only decode --steps 20 --batches 4,32,64 $X > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|32|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
