#!/bin/bash
# session 23 run 1: the o and down projections' K splits added in L2 as 64-bit fixed point
# (red.add.u64 as each split finishes; the norm reads the sums): test_cuda_backend and
# test_cuda_model, then in-process A/Bs against the GEMM's own sum and the f32 partials in the
# norm, and two interleaved rounds against the previous commit's binary at batches 2-64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23a && tar xJf .carry/s23a/bin.tar.xz -C /tmp/s23a; B=/tmp/s23a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
grep -i "fail\|differ" $O/test_cuda_backend.txt | head -5
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 2,4,8,16,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|8|16|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
timeout 80 $B/bench_model_cuda --only decode --batches 4,16 --parts-ab > $O/parts_ab.txt 2>&1 || echo "parts-ab rc $?"
grep "split sums" $O/parts_ab.txt
timeout 60 $B/bench_model_cuda --only decode --batches 4 --parts-ab2 > $O/parts_ab2.txt 2>&1 || echo "parts-ab2 rc $?"
grep "split sums" $O/parts_ab2.txt
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
