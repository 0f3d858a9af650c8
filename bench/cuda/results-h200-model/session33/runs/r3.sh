#!/bin/bash
# Run 3: s32f (the committed code) at batches 4, 8, 16 and 32 with the fused MLP forced from 1 row
# (--mlp 2), and with the wide o projection forced too (--wide 2), against the default, separate
# processes, three rounds. Neither was measured below 40 rows in the step before.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s32f && tar xJf .carry/s32f/bin.tar.xz -C /tmp/s32f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s32f/bin O=/tmp/o3; mkdir -p $O
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r 4,8,16,32; run mlp.$r 4,8,16,32 --mlp 2; run mlpwide.$r 4,8,16,32 --mlp 2 --wide 2
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
