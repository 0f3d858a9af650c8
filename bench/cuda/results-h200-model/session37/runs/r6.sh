#!/bin/bash
# Run 6: the committed code (`s37b`) at batches 3-5 with a 2048-key table (longest context past
# 1024): the default (8 splits of 256 keys) against forced 11 splits (192 keys; 352 units, so 2
# per CTA) and 16 (128 keys, 2 per CTA), at contexts 1100, 1300 and 600-1150.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s37b && tar xJf .carry/s37b/bin.tar.xz -C /tmp/s37b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do for a in "--context 1100" "--context 1300" "--context 1150 --context-spread 600"; do for s in 0 11 16; do
  n=$(echo $a | tr -d ' -').s$s.$r; timeout 40 /tmp/s37b/bin/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-splits $s > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done; done
tar czf ${OUT:-/tmp}/r6.tar.gz -C /tmp o6
