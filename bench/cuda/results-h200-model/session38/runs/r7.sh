#!/bin/bash
# Run 7: `s38f` as committed (`--attn-splits-from ringold`): batches 3-5 over a 2048-key table
# (contexts 1100, 500-1100, 600-1150, 1300), the default 8 splits of 256 keys (256 attention CTAs)
# against forced 6 of 384 (192 CTAs) and 5 of 448 (160 CTAs): do fewer attention CTAs place the
# o projection and the MLP better (run 3's stamps) by more than their longer units cost?
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38f && tar xJf .carry/s38f/bin.tar.xz -C /tmp/s38f; B=/tmp/s38f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for a in "--context 1100" "--context 1100 --context-spread 500" "--context 1150 --context-spread 600" "--context 1300"; do for s in 0 6 5; do
  n=$(echo $a | tr -d ' -').s$s; timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-splits-from ringold --attn-splits $s > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp o7
