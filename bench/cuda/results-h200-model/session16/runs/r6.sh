#!/bin/bash
# session 16 run 6: the final ring (bench_model_cuda: 4 stages of 24 KiB refilled early, 3 weight stages before the PDL wait) against the committed build (base) and against 2 weight stages before the wait (p2), three rounds; cp.async vs TMA at 16 and 64 rows on the final ring
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s16f && tar xJf .carry/s16f/bin.tar.xz -C /tmp/s16f; B=/tmp/s16f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
V=(base model_cuda p2)
for r in 0 1 2; do
  for k in 0 1 2; do v=${V[$(( (k + r) % 3 ))]}
    timeout 120 $B/bench_$v --only decode --batches 4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 200 $B/bench_model_cuda --only decode --batches 16,64 --tile-copy-ab > $O/copy_ab.txt 2>&1 || echo "copy ab rc $?"
echo "== step ms (x roofline) =="; for v in ${V[@]}; do for f in $O/bm_$v.*.txt; do echo "$(basename $f): $(grep -E '^(4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done; done
grep "tile copy" $O/copy_ab.txt | grep "default kernels"
cd $O && tar czf r6.tgz bm_*.txt gpu.txt copy_ab.txt && rm bm_*.txt copy_ab.txt
