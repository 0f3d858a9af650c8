#!/bin/bash
# Session 30, run 6: s30f = s30e + --wide-cl 2 (the cluster-summed wide kernel for a projection
# whose norm follows only, o): batch 64 (and 4) in separate processes, two rounds: s29j; s30f
# AUTO (wide o, partials into the norm); + --wide-flush 1 (qkv wide + a sum); --wide-cl 2;
# --wide-cl 2 --wide-flush 1.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30f; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
run() { # name binary args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run s29j.$r s29j
  run auto.$r s30f
  run flush.$r s30f --wide-flush 1
  run cl2.$r s30f --wide-cl 2
  run cl2flush.$r s30f --wide-cl 2 --wide-flush 1
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
