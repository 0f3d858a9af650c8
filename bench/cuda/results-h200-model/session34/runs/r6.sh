#!/bin/bash
# Run 6: `s34d` = decode_l2_ahead by bulk prefetches (cp.async.bulk.prefetch.L2 of each tile's
# 4 KiB K and V rows) instead of run 4's 4-byte L2::256B loads, which moved nothing (run 5: 168
# of the 256 attention CTAs enter ~18 us before qkv ends, and exit no earlier than the rest).
# test_cuda_attention; batches 4 and 64 with N = 0, 2, 4, 8, two rounds; stamped batch 64, N 0/8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34d && tar xJf .carry/s34d/bin.tar.xz -C /tmp/s34d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34d/bin O=/tmp/o6; mkdir -p $O
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.txt)"; grep -m8 FAIL $O/test_cuda_attention.txt
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do for n in 0 2 4 8; do run l2_$n.$r 4,64 --attn-l2 $n; done; done
for n in 0 8; do
  timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 --attn-l2 $n --diag-stamps $O/stamps_$n.txt > $O/diag_$n.txt 2>&1 || echo "diag $n rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$n.txt > $O/timeline_$n.txt 2>&1; gzip $O/stamps_$n.txt
  echo "== l2 $n: $(grep -E '^64 ' $O/diag_$n.txt | awk '{print $3, $6}')"; sed -n 3,12p $O/timeline_$n.txt
  python3 bench/cuda/results-h200-model/session34/runs/att_entry.py $O/stamps_$n.txt.gz | head -4
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
