#!/bin/bash
# Run 6: the committed code (`s35g`, `s36d` its bench_diag). Batch 3 ran ~100 us faster than batch 4
# in run 3 (4 and 6 level): batches 3 and 4 at contexts 256 and 1024 (separate processes), and a
# stamped step of each at 512.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g /tmp/s36d && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g && tar xJf .carry/s36d/bin.tar.xz -C /tmp/s36d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin D=/tmp/s36d/bin O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for c in 256 1024; do for bb in 3 4; do
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bb --context $c > $O/c$c.b$bb.txt 2>&1 || echo "c$c b$bb rc $?"
  echo "c$c: $(grep -E '^[0-9]+ ' $O/c$c.b$bb.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done; done
for bb in 3 4; do
  timeout 60 $D/bench_diag --only decode --steps 4 --batches $bb --diag-stamps $O/stamps_$bb.txt > $O/diag_$bb.txt 2>&1 || echo "diag $bb rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$bb.txt > $O/timeline_$bb.txt 2>&1; rm -f $O/stamps_$bb.txt
  echo "== batch $bb: $(grep -E "^$bb " $O/diag_$bb.txt | awk '{print $3, $6}')"; sed -n 1,45p $O/timeline_$bb.txt
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
