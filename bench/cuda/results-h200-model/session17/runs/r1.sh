#!/bin/bash
# session 17 run 1 (prepared in session 16): ../patches/prepared_swiglu_in_gate_up_epilogue.patch
# built on the dev VM into .carry/s17p/bin.tar.xz (bench_base = this session's final code).
# test_cuda_backend (its new test_matmul_swiglu), test_cuda_model and test_cuda_engine on the
# patched build, then --swiglu-ab and base against the patch at batch 2/4/16/64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17p && tar xJf .carry/s17p/bin.tar.xz -C /tmp/s17p; B=/tmp/s17p/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for t in backend model engine; do timeout 200 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,16,64 --swiglu-ab > $O/swiglu_ab.txt 2>&1 || echo "ab rc $?"
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 2,4,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
grep "gate/up SwiGLU" $O/swiglu_ab.txt
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
