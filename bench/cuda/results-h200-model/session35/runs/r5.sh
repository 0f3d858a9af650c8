#!/bin/bash
# Run 5: `s35e` = the session's library without the balanced cut (dropped) + bench_model_cuda
# --context-spread. Batch 64 at contexts 128-2560 (mean 1344) against all at 1344, two rounds,
# separate processes; then a stamped step of each (bench_diag) read by diag_timeline.py.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35e && tar xJf .carry/s35e/bin.tar.xz -C /tmp/s35e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35e/bin O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
run() { # name args...
  local n=$1; shift
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches 64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do run spread.$r --context 2560 --context-spread 128; run uni1344.$r --context 1344; done
for v in "spread --context 2560 --context-spread 128" "uni1344 --context 1344"; do
  set -- $v; n=$1; shift
  timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 "$@" --diag-stamps $O/stamps_$n.txt > $O/diag_$n.txt 2>&1 || echo "diag $n rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$n.txt > $O/timeline_$n.txt 2>&1; gzip $O/stamps_$n.txt
  echo "== $n: $(grep -E '^64 ' $O/diag_$n.txt | awk '{print $3, $6}')"; sed -n 1,40p $O/timeline_$n.txt
done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
