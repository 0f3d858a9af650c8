#!/bin/bash
# session 23 run 3: the fixed-point norm letting the next kernel (gate_up, qkv) launch only
# after its loads (so the next GEMM's first weight stages do not queue ahead of them), against
# the trigger at its top (--parts-ab3) at batches 2-16; two rounds against the previous
# commit's binary at 4 and 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23c && tar xJf .carry/s23c/bin.tar.xz -C /tmp/s23c; B=/tmp/s23c/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8,16 --parts-ab3 > $O/parts_ab3.txt 2>&1 || echo "ab3 rc $?"
grep "split sums" $O/parts_ab3.txt | sed 's/split sums: //'
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 60 $B/bench_$v --only decode --batches 4,8 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|8|16|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
