#!/bin/bash
# session 23 run 2: fixed-point split sums with the splits first added in clusters of 2 or 4
# (fewer adds reach L2), and with at most 7 splits: test_cuda_backend, then in-process A/Bs at
# batches 4, 8, 16.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23b && tar xJf .carry/s23b/bin.tar.xz -C /tmp/s23b; B=/tmp/s23b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?"; tail -1 $O/test_cuda_backend.txt
grep -i "fail\|differ" $O/test_cuda_backend.txt | head -5
for c in 4 2; do
  timeout 100 $B/bench_model_cuda --only decode --batches 4,8,16 --fixed-cluster-ab $c > $O/fc$c.txt 2>&1 || echo "fc $c rc $?"
  grep "split sums" $O/fc$c.txt | sed 's/fixed-point split sums: //'
done
timeout 100 $B/bench_model_cuda --only decode --batches 4,8 --tile-max-ab 7 > $O/max7.txt 2>&1 || echo "max7 rc $?"
grep "tile GEMM split" $O/max7.txt
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
