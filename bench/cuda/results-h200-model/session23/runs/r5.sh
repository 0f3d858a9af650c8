#!/bin/bash
# session 23 run 5: the attention's split merge letting the o projection launch after its
# loads (--late-ab 5: norms + merge, against AUTO = the norms late; --late-ab 4: the merge
# alone), at batches 4, 8, 16, 64; test_cuda_attention first; then two rounds against the
# previous commit's binary at 4 and 64.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s23e && tar xJf .carry/s23e/bin.tar.xz -C /tmp/s23e; B=/tmp/s23e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $?"; tail -1 $O/test_cuda_attention.txt
s() { grep "$1" $2 | sed -E 's/.*batch ([0-9]+), round [0-9]+, (.*): step ([0-9.]+) ms/\1|\2|\3/' | awk -F'|' '{k="B"$1" "$2; v[k]=v[k]" "$3} END {for (k in v) print k":"v[k]}' | sort -V; }
timeout 150 $B/bench_model_cuda --only decode --batches 4,8,16,64 --late-ab 5 > $O/late5.txt 2>&1 || echo "late5 rc $?"
echo "== late-ab 5 (AUTO: norms late; KINDS: norms + merge)"; s "next-kernel" $O/late5.txt
timeout 150 $B/bench_model_cuda --only decode --batches 4,64 --late-ab 4 > $O/late4.txt 2>&1 || echo "late4 rc $?"
echo "== late-ab 4 (KINDS: merge only)"; s "next-kernel" $O/late4.txt
V=(prev model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 4,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|8|16|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
