#!/bin/bash
# Run 7: the committed code (`s34a`): is the attention's early start worth anything at batch 64?
# Run 5's stamps: the 168-208 attention CTAs that enter ~18 us before qkv ends (old keys' first
# two stages loaded before the wait) exit no earlier than those entering at its end.
# --attn-early-ab (old keys before / after the PDL wait) and --attn-units-ab (AUTO / one unit a
# CTA) at batches 4 and 64, three interleaved rounds each, two processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34a && tar xJf .carry/s34a/bin.tar.xz -C /tmp/s34a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34a/bin O=/tmp/o7; mkdir -p $O
for r in 0 1; do
  timeout 120 $B/bench_model_cuda --only decode --steps 20 --batches 4,64 --attn-early-ab --attn-units-ab > $O/ab.$r.txt 2>&1 || echo "ab $r rc $?"
  grep -E "^(4|64) " $O/ab.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}'; echo
  grep -E "^attention (old keys|units):" $O/ab.$r.txt
done
tar czf ${OUT:-/tmp}/r7.tgz -C $O .
