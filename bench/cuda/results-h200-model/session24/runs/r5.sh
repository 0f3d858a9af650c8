#!/bin/bash
# session 24 run 5: a captured graph segment's host-to-device uploads made roots of the graph
# (hoist_uploads; their consumers launched programmatically after the kernel before). GPU
# tests; --upload-order-ab at 1, 4, 64; three rounds against HEAD's build (bench_base) at 1,
# 2, 4, 16, 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24g && tar xJf .carry/s24g/bin.tar.xz -C /tmp/s24g; B=/tmp/s24g/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m3 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 200 $B/bench_model_cuda --only decode --batches 1,4,64 --upload-order-ab > $O/upab.txt 2>&1 || echo "upab rc $?"
echo "== upload-order-ab"; s "upload order" $O/upab.txt; grep -m3 "CUDA graphs so far" $O/upab.txt
V=(base model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 1,2,4,16,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
