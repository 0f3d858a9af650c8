#!/bin/bash
# Session 31, run 4: s31d = s30h + only the fused MLP's pre-wait weight stages knob (--mlp-pre N,
# 6 = the whole ring, as committed; no other change): batch 64 (and 4), separate processes,
# three rounds, against s30h. Stamped batch-64 steps of s31c with the qkv projection over all
# of K as 96- and 128-row tiles (--wide-direct 2 / 3) and its default, to see where run 1's
# direct qkv lost.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31c s31d; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r s30h
  run d.$r s31d
  run pre2.$r s31d --mlp-pre 2
  run pre3.$r s31d --mlp-pre 3
  run pre4.$r s31d --mlp-pre 4
done
for v in c d2 d3; do
  a=""; [ $v = d2 ] && a="--wide-direct 2"; [ $v = d3 ] && a="--wide-direct 3"
  timeout 100 /tmp/s31c/bin/bench_diag --only decode --steps 4 --batches 64 $a --diag-stamps $O/stamps_$v.txt > $O/diag_$v.txt 2>&1 || echo "diag $v rc $?"
done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
