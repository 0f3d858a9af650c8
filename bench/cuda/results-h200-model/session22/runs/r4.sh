#!/bin/bash
# session 22 run 4 (run 3 again, the partials loaded at once): a split tile GEMM's partials added by the add + RMSNorm after it (o and
# down up to 16 rows): the GPU tests, --parts-ab at batches 2-16 (three interleaved rounds),
# the committed binary's steps, and the new code's timeline at batch 4 (diagnostic build).
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
mkdir -p /tmp/s22f /tmp/s21z && tar xJf .carry/s22f/bin.tar.xz -C /tmp/s22f && tar xJf .carry/s21z/bin.tar.xz -C /tmp/s21z
B=/tmp/s22f
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -2 $O/$t.txt; done
timeout 200 $B/bench_model_cuda --only decode --batches 2,4,8,16 --parts-ab > $O/steps_ab.txt 2>&1 || echo "ab rc $?"
timeout 100 /tmp/s21z/bench_model_cuda --only decode --batches 1,4,64 > $O/steps_base.txt 2>&1 || echo "base rc $?"
timeout 100 $B/bench_model_cuda --only decode --batches 1,4,64 > $O/steps_new.txt 2>&1 || echo "new rc $?"
timeout 100 $B/bench_diag --only decode --batches 4 --diag-stamps $O/stamps.txt > $O/steps_diag.txt 2>&1 || echo "diag rc $?"
awk '/^#/ || $2==2' $O/stamps.txt | gzip -9 > $O/stamps_step2.txt.gz && rm $O/stamps.txt
cat $O/gpu.txt
grep -h "split sums" $O/steps_ab.txt
grep -hE "^device|^[0-9]+ +512 " $O/steps_base.txt $O/steps_new.txt
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
