#!/bin/bash
# session 24 run 7: k-sliced 16-row tiles over all of K for 2-8-row GEMMs the tile kernel
# would split (the o and down projections at batches 2-8: no split partials, a plain norm
# after). GPU tests; --kslice-ab at 2, 4, 8; two rounds against HEAD's build at 1-64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24j && tar xJf .carry/s24j/bin.tar.xz -C /tmp/s24j; B=/tmp/s24j/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m4 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8 --kslice-ab > $O/ksab.txt 2>&1 || echo "ksab rc $?"
echo "== kslice-ab"; s "kslice" $O/ksab.txt
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 1,2,4,8,16,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
