#!/bin/bash
# session 23 run 6: run 5's build (norms late by default) at batch 1, where the norm is the
# plain kernel after the CUDA-core GEMV: none late (--late-ab 16), norms + SwiGLU late
# (--late-ab 3), norms + merge (--late-ab 5).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23e && tar xJf .carry/s23e/bin.tar.xz -C /tmp/s23e; B=/tmp/s23e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
for k in 16 3 5; do
  timeout 100 $B/bench_model_cuda --only decode --batches 1,2 --late-ab $k > $O/late$k.txt 2>&1 || echo "late$k rc $?"
  echo "== late-ab $k (AUTO: norms late)"; s "next-kernel" $O/late$k.txt
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
