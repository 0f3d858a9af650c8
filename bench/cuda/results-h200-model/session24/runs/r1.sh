#!/bin/bash
# session 24 run 1: SwiGLU with 16 bytes a thread (one wave of CTAs): test_cuda_backend,
# --swiglu-ab at 4-64, then two rounds against the committed binary (s23f) at 4, 16, 32, 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24a /tmp/s23f && tar xJf .carry/s24a/bin.tar.xz -C /tmp/s24a && tar xJf .carry/s23f/bin.tar.xz -C /tmp/s23f
B=/tmp/s24a/bin; cp /tmp/s23f/bin/bench_model_cuda $B/bench_prev
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?"; tail -1 $O/test_cuda_backend.txt; grep -i "swiglu" $O/test_cuda_backend.txt | grep -i fail | head -3
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 200 $B/bench_model_cuda --only decode --batches 4,16,32,64 --swiglu-ab > $O/swab.txt 2>&1 || echo "swab rc $?"
echo "== swiglu-ab"; s "swiglu" $O/swab.txt
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 4,16,32,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
