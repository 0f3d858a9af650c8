#!/bin/bash
# session 22 run 6: the partials' norm with one warp per CTA (a cluster of 10 per row at dim
# 2560, PL_EXP_PARTS_C=10) against 5 CTAs of two warps, and at most 8 K splits (fewer partials):
# --parts-ab and --tile-max-ab 8 at batches 4 and 8; test_cuda_backend with C = 10.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
mkdir -p /tmp/s22h && tar xJf .carry/s22h/bin.tar.xz -C /tmp/s22h
B=/tmp/s22h
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
PL_EXP_PARTS_C=10 timeout 240 $B/test_cuda_backend > $O/test_cuda_backend_c10.txt 2>&1; echo "test c10 rc $?"; tail -1 $O/test_cuda_backend_c10.txt
for c in 5 10; do
  PL_EXP_PARTS_C=$c timeout 200 $B/bench_model_cuda --only decode --batches 4,8 --parts-ab --tile-max-ab 8 > $O/steps_c$c.txt 2>&1 || echo "c$c rc $?"
done
cat $O/gpu.txt
for c in 5 10; do echo "== C $c"; grep -hE "split sums|tile" $O/steps_c$c.txt | grep -v "^batch\|^decode\|^dependent"; done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
