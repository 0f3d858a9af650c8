#!/bin/bash
# session 22 run 8: with the partials' norm (default, one warp per CTA), the tile GEMM's CTAs of
# 16 k tiles or more (gate_up, the LM head; qkv and down past 16 rows) issuing 1 or 2 weight
# stages before the PDL wait instead of 3 (--prewait-ab N), and --parts-ab again; batches 4, 8, 64.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
mkdir -p /tmp/s22j && tar xJf .carry/s22j/bin.tar.xz -C /tmp/s22j
B=/tmp/s22j
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
timeout 300 $B/bench_model_cuda --only decode --batches 4,8 --parts-ab --prewait-ab 1 > $O/steps_p1.txt 2>&1 || echo "p1 rc $?"
timeout 200 $B/bench_model_cuda --only decode --batches 4,64 --prewait-ab 2 > $O/steps_p2.txt 2>&1 || echo "p2 rc $?"
cat $O/gpu.txt
grep -h "split sums\|pre-wait" $O/steps_p1.txt $O/steps_p2.txt
grep -hE "^[0-9]+ +512 " $O/steps_p1.txt $O/steps_p2.txt
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
