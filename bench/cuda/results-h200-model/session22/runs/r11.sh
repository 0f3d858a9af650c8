#!/bin/bash
# session 22 run 11: the committed code after the norm kernels' shared pieces moved into
# helpers (add8_sumsq, norm8): the GPU tests, and two rounds against base at batches 4 and 16.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s22l && tar xJf .carry/s22l/bin.tar.xz -C /tmp/s22l; B=/tmp/s22l/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o11; mkdir -p $O
for t in test_cuda_backend test_cuda_model test_cuda_engine; do timeout 240 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?"; tail -1 $O/$t.txt; done
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 60 $B/bench_$v --only decode --batches 4,16 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(4|16) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
