#!/bin/bash
# Session 45, run 3 (a diagnostic): where run 2's placeholder CTAs put the GEMMs' CTAs. .carry/d45: bench_model_cuda
# built with -DPL_DIAG_STAMPS from run 2's code + --hooks LIST (the whole run). Stamped batch-4 steps at contexts
# 500-1100 (a 2048-key table) and 500-1000, without placeholders and with pad:65 (pairs), pad:66 (even spread) on
# gate/up and pad:81 (pairs on o, down and gate/up), summarized by bench/cuda/diag_timeline.py.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/d45 && tar xJf .carry/d45/bin.tar.xz -C /tmp/d45; B=/tmp/d45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for c in "1100 aa" "1100 pad:65" "1100 pad:66" "1100 pad:81" "1000 aa" "1000 pad:65"; do
  set -- $c; a="--context $1 --context-spread 500"
  n=c$1_$(echo $2 | tr ':' '-')
  timeout 60 $B/bench_model_cuda --only decode --steps 6 --batches 4 $a --hooks $2 --diag-stamps $O/$n.stamps > $O/$n.txt 2>&1 || echo "$n rc $?"
  python3 bench/cuda/diag_timeline.py $O/$n.stamps > $O/$n.timeline.txt 2>&1 || echo "$n timeline rc $?"
  rm -f $O/$n.stamps
  echo "== $n: stamped $(grep -E '^4 ' $O/$n.txt | awk '{print $3, $6}')"
  grep -E "^(gate_up|o|down|qkv) " $O/$n.timeline.txt | tail -4
done
tar czf ${OUT:-/tmp}/r3.tgz -C /tmp or3
