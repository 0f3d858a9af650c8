#!/bin/bash
# session 22 run 5: the partials' norm with its global stores after the cluster barrier, and a
# stamp when its loads are added: test_cuda_backend, --parts-ab at batches 4 and 8, the timeline at batch 4.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
mkdir -p /tmp/s22g && tar xJf .carry/s22g/bin.tar.xz -C /tmp/s22g
B=/tmp/s22g
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend; do timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
timeout 200 $B/bench_model_cuda --only decode --batches 4,8 --parts-ab > $O/steps_ab.txt 2>&1 || echo "ab rc $?"
timeout 100 $B/bench_diag --only decode --batches 4 --diag-stamps $O/stamps.txt > $O/steps_diag.txt 2>&1 || echo "diag rc $?"
awk '/^#/ || $2==2' $O/stamps.txt | gzip -9 > $O/stamps_step2.txt.gz && rm $O/stamps.txt
cat $O/gpu.txt
grep -h "split sums" $O/steps_ab.txt
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
