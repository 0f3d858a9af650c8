#!/bin/bash
# session 21 run 11: every tile GEMM up to 8 rows reading its next 1, 2 or 4 k tiles for real
# before its PDL wait (every thread's cp.async into the x slots' unused rows, discarded; they
# join the pre-wait stages' group), so the ring's later loads hit L2: --l2-ahead-ab 0x4000N,
# batches 4, 2, 8.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o11; mkdir -p $O
mkdir -p /tmp/s21i && tar xJf .carry/s21i/bin.tar.xz -C /tmp/s21i; B=/tmp/s21i
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 250 $B/bench_model_cuda --only decode --batches 4,2,8 --l2-ahead-ab 0x40001 --l2-ahead-ab 0x40002 --l2-ahead-ab 0x40004 > $O/rd.txt 2>&1 || echo "rd rc $?"
cat $O/gpu.txt
grep -E "round|^[0-9]+ +[0-9]+ " $O/rd.txt
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
