#!/bin/bash
# session 10 run 1: the tile GEMM's TMA ring depth (8 stages at one CTA per SM past 32 rows): GPU test, then the stage sweep, then new vs old binary interleaved
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s10/bin; OB=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
timeout 120 $B/test_cuda_backend > $O/run1_test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/run1_test_cuda_backend.txt)"
grep -i "fail" $O/run1_test_cuda_backend.txt | head -5
timeout 150 stdbuf -oL $B/bench_model_cuda --only decode --batches 16,32,48,64 --steps 15 --tile-stages-ab > $O/run1_stages.txt 2>&1; echo "stages rc $?"
grep "tile stages" $O/run1_stages.txt | sed 's/tile stages: //'
for r in 1 2; do
  timeout 40 stdbuf -oL $B/bench_model_cuda --only decode --batches 4,32,48,64 --steps 15 > $O/run1_new_$r.txt 2>&1; echo "new $r rc $?"
  timeout 40 stdbuf -oL $OB/bench_model_cuda --only decode --batches 4,32,48,64 --steps 15 > $O/run1_old_$r.txt 2>&1; echo "old $r rc $?"
done
for f in $O/run1_new_1.txt $O/run1_old_1.txt $O/run1_new_2.txt $O/run1_old_2.txt; do echo "== $(basename $f)"; grep -E "^(4|32|48|64) " $f | cut -c1-120; done
