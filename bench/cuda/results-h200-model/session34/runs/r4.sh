#!/bin/bash
# Run 4: `s34c` = 6c529c3 + decode_l2_ahead (the decode attention pulls N more old-key tiles per
# warp into L2 before its PDL wait, one 4-byte ld.global.L2::256B per K or V row; bench flag
# --attn-l2 N). test_cuda_attention; then batches 4 and 64 of Qwen3-4B with N = 0, 2, 4, 8 in
# separate processes, three rounds; Qwen3-8B batch 64 with 0 and 4.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34c && tar xJf .carry/s34c/bin.tar.xz -C /tmp/s34c
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34c/bin O=/tmp/o4; mkdir -p $O
timeout 200 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.txt)"; grep -m8 FAIL $O/test_cuda_attention.txt
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  for n in 0 2 4 8; do run l2_$n.$r 4,64 --attn-l2 $n; done
  run 8b.l2_0.$r 64 --shape qwen3-8b; run 8b.l2_4.$r 64 --shape qwen3-8b --attn-l2 4
done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
