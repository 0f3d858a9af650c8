#!/bin/bash
# Run 7: the committed code (`s35g`). Batch 4 at context 512 ran ~100 us slower than batch 3 (run 3),
# level at 256 and 1024 (run 6): batches 3, 4 and 5 at contexts 384-640, two rounds, one process
# per context and round.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do for c in 384 448 512 576 640; do
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 --context $c > $O/c$c.$r.txt 2>&1 || echo "c$c.$r rc $?"
  echo "c$c.$r: $(grep -E '^[0-9]+ ' $O/c$c.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
