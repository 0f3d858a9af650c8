#!/bin/bash
# session 16 run 7: on the final ring: the tile GEMM's K-split sweep (--tile-sweep) at batch 4 and 64, twice; the step's ablation at batch 4 and 64
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s16f && tar xJf .carry/s16f/bin.tar.xz -C /tmp/s16f; B=/tmp/s16f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
for r in 1 2; do timeout 150 $B/bench_model_cuda --only decode --batches 4,64 --tile-sweep > $O/sweep.$r.txt 2>&1 || echo "sweep rc $?"; done
timeout 150 $B/bench_model_cuda --only decode --batches 4,64 --ablate > $O/ablate.txt 2>&1 || echo "ablate rc $?"
grep -E "^(4|64) " $O/sweep.*.txt $O/ablate.txt | awk '{print $1, $3, $6}'
paste <(grep "tile split sweep" $O/sweep.1.txt) <(grep "tile split sweep" $O/sweep.2.txt | awk '{print $NF, $(NF-1)}')
grep "ablation" $O/ablate.txt
cd $O && tar czf r7.tgz sweep.*.txt ablate.txt gpu.txt && rm sweep.*.txt ablate.txt
