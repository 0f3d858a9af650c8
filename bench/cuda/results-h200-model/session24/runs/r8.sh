#!/bin/bash
# session 24 run 8: the k-sliced tiles from 5 rows by default (AUTO), 2-8 with the knob at 2:
# test_cuda_backend; --kslice-ab (always / never) at 5, 6, 7, 8; two rounds against HEAD's
# build at 4, 6, 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24k && tar xJf .carry/s24k/bin.tar.xz -C /tmp/s24k; B=/tmp/s24k/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $? $(tail -1 $O/test_cuda_backend.txt)"; grep -m4 -i "fail" $O/test_cuda_backend.txt | grep -v " 0 failed"
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 150 $B/bench_model_cuda --only decode --batches 5,6,7,8 --kslice-ab > $O/ksab.txt 2>&1 || echo "ksab rc $?"
echo "== kslice-ab"; s "kslice" $O/ksab.txt
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 4,6,8 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|6|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
