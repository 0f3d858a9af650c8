#!/bin/bash
# session 22 run 7: the partials' norm at one warp per CTA (AUTO: 10 CTAs per row at dim 2560)
# against the GEMM's own sum (--parts-ab) at batches 2-16, and at two warps per CTA
# (PL_EXP_PARTS_C=5) in another process; the GPU tests; the timeline at batch 4.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
mkdir -p /tmp/s22i && tar xJf .carry/s22i/bin.tar.xz -C /tmp/s22i
B=/tmp/s22i
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8,16 --parts-ab > $O/steps_c10.txt 2>&1 || echo "c10 rc $?"
PL_EXP_PARTS_C=5 timeout 200 $B/bench_model_cuda --only decode --batches 4,8 --parts-ab > $O/steps_c5.txt 2>&1 || echo "c5 rc $?"
timeout 100 $B/bench_diag --only decode --batches 4 --diag-stamps $O/stamps.txt > $O/steps_diag.txt 2>&1 || echo "diag rc $?"
awk '/^#/ || $2==2' $O/stamps.txt | gzip -9 > $O/stamps_step2.txt.gz && rm $O/stamps.txt
cat $O/gpu.txt
for c in c10 c5; do echo "== $c"; grep -h "split sums" $O/steps_$c.txt; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
