#!/bin/bash
# session 23 run 4: the PDL trigger after the loads (the next GEMM's CTAs launch once the
# small kernel's loads are back). This build: late in the norms by default (kLateAuto).
# In-process A/Bs: none late (--late-ab 16), norms + SwiGLU late (--late-ab 3), fixed-point
# sums against f32 partials (both late), clusters of 2; then two rounds against the previous
# commit's binary. test_cuda_backend first.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23d && tar xJf .carry/s23d/bin.tar.xz -C /tmp/s23d; B=/tmp/s23d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?"; tail -1 $O/test_cuda_backend.txt
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 150 $B/bench_model_cuda --only decode --batches 4,8,16,64 --late-ab 16 > $O/late16.txt 2>&1 || echo "late16 rc $?"
echo "== late-ab 16 (AUTO: norms late; KINDS: none)"; s "next-kernel" $O/late16.txt
timeout 150 $B/bench_model_cuda --only decode --batches 4,8,16,64 --late-ab 3 > $O/late3.txt 2>&1 || echo "late3 rc $?"
echo "== late-ab 3 (KINDS: norms + swiglu)"; s "next-kernel" $O/late3.txt
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8,16 --parts-ab2 > $O/parts2.txt 2>&1 || echo "parts2 rc $?"
echo "== parts-ab2"; s "split sums" $O/parts2.txt
timeout 150 $B/bench_model_cuda --only decode --batches 4,8,16 --fixed-cluster-ab 2 > $O/fc2.txt 2>&1 || echo "fc2 rc $?"
echo "== fixed-cluster-ab 2"; s "fixed-point" $O/fc2.txt
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 4,8,16,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|8|16|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
