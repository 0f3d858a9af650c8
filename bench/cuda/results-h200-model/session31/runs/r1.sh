#!/bin/bash
# Session 31, run 1: s31a = s30h + two knobs: the qkv projection over all of K as 48/96/128-row
# tiles (--wide-direct 1/2/3; 96 and 128 leave half the SMs to the attention's early CTAs) and
# bf16 partial planes for the wide o and fused MLP (--parts-bf16 1): test_cuda_backend; batch 4
# and 64 in separate processes, two rounds, against s30h.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31a; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s31a/bin/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"
grep -m8 -i "FAIL" $O/test_cuda_backend.txt
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run base.$r s30h
  run a.$r s31a
  run pbf.$r s31a --parts-bf16 1
  run d1.$r s31a --wide-direct 1
  run d2.$r s31a --wide-direct 2
  run d3.$r s31a --wide-direct 3
  run d2pbf.$r s31a --wide-direct 2 --parts-bf16 1
done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
