#!/bin/bash
# session 17 run 5: run 4's build with the cp.async sources of each refill worked out before
# the stage's wait (not after the barrier). Base = session-16 final.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
timeout 240 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"; grep -m6 -iE "fail|error" $O/test_backend.log
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 2,4,8,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
timeout 100 $B/bench_model_cuda --only decode --batches 2,4,8,16 --tile-balance-ab 2 > $O/bal2.txt 2>&1 || echo "bal2 rc $?"
grep "tile GEMM grid" $O/bal2.txt | sed 's/.*txt://'
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|8|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
