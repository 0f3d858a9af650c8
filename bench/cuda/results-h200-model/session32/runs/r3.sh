#!/bin/bash
# s32a (rebuilt after run 2: a held gate/up-shaped GEMM flushed unfused takes the full-K kernel too, as
# Qwen3-4B's qkv [6144 x 2560] is held so; run 2 never ran it) = s31e's code + the qkv projection at 57-64 rows as the fused MLP's phase 1 alone
# (pl_cuda_fullk_bf16: one CTA per SM over all of K, 48-column tiles at Qwen3-4B, no K split, no
# sums). --fullk 1: the tile GEMM (as s31e); 0: AUTO (the ring that fits beside one attention CTA,
# 15 stages, 5 before the PDL wait); 3: the deep ring (22 stages). Tests first, then batch 4 and 64,
# three rounds, and stamped batch-64 steps.
cd "$(dirname "$0")/../../../../.."
for v in s31e s32a; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 /tmp/s32a/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -i "FAIL" $O/$t.txt
done
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 60 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r s31e
  run tile.$r s32a --fullk 1
  run full.$r s32a
  run fullp1.$r s32a --fullk-pre 1
  run fullp15.$r s32a --fullk-pre 15
  run deep.$r s32a --fullk 3
done
for f in 0 3; do
  timeout 60 /tmp/s32a/bin/bench_diag --only decode --steps 4 --batches 64 --fullk $f --diag-stamps $O/stamps_fk$f.txt > $O/diag_fk$f.txt 2>&1 || echo "diag $f rc $?"
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
