#!/bin/bash
# session 27 run 13 (review): op_matmul passes a per-call copy of the GEMM knobs with x's rows
# (gemv_ws_for) instead of setting and resetting them on the backend: test_cuda_backend,
# test_cuda_model, and one decode run at batches 4 and 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s27h && tar xJf .carry/s27h/bin.tar.xz -C /tmp/s27h
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o13; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s27h/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m3 FAIL $O/$t.txt
done
timeout 60 /tmp/s27h/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 > $O/steps.txt 2>&1 || echo "steps rc $?"
grep -E '^(4|64) ' $O/steps.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}'; echo
tar czf ${OUT:-/tmp}/r13.tgz -C $O .
