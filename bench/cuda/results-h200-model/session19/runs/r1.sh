#!/bin/bash
# session 19 run 1: the step's q/k norm + RoPE and K/V append inside the decode attention
# kernel (pl_cuda_attn_rope). GPU tests on the new build, then in one process the fused step
# against the rope kernel (--rope-ab, three interleaved rounds), then base (session-18 final
# code) against the new build in interleaved processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s19a && tar xJf .carry/s19a/bin.tar.xz -C /tmp/s19a; B=/tmp/s19a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
timeout 200 $B/bench_model_cuda --only decode --batches 1,4,16,64 --rope-ab > $O/ab.txt 2>&1 || echo "ab rc $?"
grep -E "RoPE \+ K/V append" $O/ab.txt
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
