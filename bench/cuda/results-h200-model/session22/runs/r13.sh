#!/bin/bash
# session 22 run 13: TMA boxes as the tile GEMM's default at every size (was: past 8 rows):
# test_cuda_backend and test_cuda_model, then two interleaved rounds against the previous
# commit's binary (cp.async up to 8 rows) at batches 2, 4, 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s22m && tar xJf .carry/s22m/bin.tar.xz -C /tmp/s22m; B=/tmp/s22m/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o13; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do timeout 120 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 50 $B/bench_$v --only decode --batches 2,4,8 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|8) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r13.tgz -C $O .
