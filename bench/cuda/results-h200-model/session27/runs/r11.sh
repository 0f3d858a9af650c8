#!/bin/bash
# session 27 run 11: the projection chain (exp_l2_stream, committed library) at 64 and 32 rows with
# the tile kernel's K splits aimed at 1 CTA per SM (the default past 16 rows) and at 2 (as up to 16),
# 3 rounds each: what the GEMMs alone would gain from two CTAs per SM.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o11; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for m in 64 32; do for c in 1 2; do
  timeout 50 .carry/s27g/exp_l2_stream $m 3 $c > $O/m$m.c$c.txt 2>&1 || echo "m$m c$c rc $?"
  echo "== $m rows, $c CTA(s) per SM"; grep -E "splits|round.*chain alone " $O/m$m.c$c.txt | sed 's/  (pacing.*//'
done; done
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
