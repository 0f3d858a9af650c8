#!/bin/bash
# Run 3: the committed code (`s35g`; `s36d` = its -DPL_DIAG_STAMPS bench_diag). Batches 3-8 at context
# 512, two rounds, separate processes; then stamped steps at batch 4 and batch 8 (bench_diag) read by
# diag_timeline.py: where a batch-4 layer goes today (the last batch-4 timeline was the
# twenty-fifth session's).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g /tmp/s36d && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g && tar xJf .carry/s36d/bin.tar.xz -C /tmp/s36d
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin D=/tmp/s36d/bin O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1; do
  timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5,6,8 > $O/b.$r.txt 2>&1 || echo "b.$r rc $?"
  echo "b.$r: $(grep -E '^[0-9]+ ' $O/b.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done
for bb in 4 8; do
  timeout 60 $D/bench_diag --only decode --steps 4 --batches $bb --diag-stamps $O/stamps_$bb.txt > $O/diag_$bb.txt 2>&1 || echo "diag $bb rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_$bb.txt > $O/timeline_$bb.txt 2>&1; gzip $O/stamps_$bb.txt
  echo "== batch $bb: $(grep -E "^$bb " $O/diag_$bb.txt | awk '{print $3, $6}')"; sed -n 1,32p $O/timeline_$bb.txt
done
mkdir -p /tmp/o3s && mv $O/stamps_*.gz /tmp/o3s/
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
