#!/bin/bash
# Session 31's prepared run: s31h = the committed code + the qkv
# projection of 57-64 rows as the wide kernel with 2 or 3 K splits and each tile's last split
# CTA adding the tile's partials into bf16 y (--wide-fix 2 / 3; 78 or 117 CTAs at Qwen3-4B, so
# with 2 splits 54 SMs stay free for the decode attention's early CTAs; no sum kernel), and with
# 2 weight stages before its PDL wait (--wide-fix-pre 2: its CTAs enter as the fused MLP's leave,
# beside the norm that reads the MLP's partials, as the MLP's own stages were cut this session).
# Code: ../patches/prepared_qkv_wide_with_own_sums.patch on 53e9b51. test_cuda_backend,
# test_cuda_model; batch 4 and 64 against s31e, three rounds; stamped batch-64 steps.
cd "$(dirname "$0")/../../../../.."
for v in s31e s31h; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o10; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s31h/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 60 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r s31e
  run h.$r s31h
  run fix2.$r s31h --wide-fix 2
  run fix3.$r s31h --wide-fix 3
  run fix2p.$r s31h --wide-fix 2 --wide-fix-pre 2
  run fix3p.$r s31h --wide-fix 3 --wide-fix-pre 2
done
for f in 0 2 3; do
  timeout 60 /tmp/s31h/bin/bench_diag --only decode --steps 4 --batches 64 --wide-fix $f --diag-stamps $O/stamps_fix$f.txt > $O/diag_fix$f.txt 2>&1 || echo "diag $f rc $?"
done
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
