#!/bin/bash
# Run 8: the committed code (`s35g`). Batch 4 ran slower than batches 3 and 5 at contexts 448-640
# (run 7). Batch 5 takes 6 context splits of 192 keys, batches 3 and 4 take 8 of 128: batch 4 with
# --attn-splits 4, 6 and the heuristic (8), contexts 512 and 640, two rounds, separate processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do for c in 512 640; do for s in 0 4 6; do
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 4 --context $c --attn-splits $s > $O/c$c.s$s.$r.txt 2>&1 || echo "c$c.s$s.$r rc $?"
  echo "c$c.s$s.$r: $(grep -E '^[0-9]+ ' $O/c$c.s$s.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
