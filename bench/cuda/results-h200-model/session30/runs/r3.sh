#!/bin/bash
# Session 30, run 3: s30c = s30b + knobs of the partials' add + RMSNorm (CTAs per row, PDL trigger
# after its loads): A/Bs at 64 (wide o and wide qkv on), stamped steps with 1 CTA per row.
cd "$(dirname "$0")/../../../../.."
for v in s30c; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
B=/tmp/s30c/bin/bench_model_cuda
for c in 1 2 5; do
  timeout 120 $B --only decode --steps 20 --batches 64 --wide-flush 1 --parts-c-ab $c > $O/pc$c.txt 2>&1 || echo "pc$c rc $?"
  grep "^parts" $O/pc$c.txt | awk -v c=$c '{printf "c%s r%s %s %s %s | ", c, $6, $7, $9, $(NF-1)}'; echo
done
timeout 120 $B --only decode --steps 20 --batches 64 --wide-flush 1 --parts-late-ab > $O/late.txt 2>&1 || echo "late rc $?"
grep "^parts" $O/late.txt | awk '{printf "r%s %s %s %s %s | ", $6, $7, $8, $10, $(NF-1)}'; echo
timeout 120 $B --only decode --steps 20 --batches 64 --wide-flush 1 --parts-c 1 --parts-late-ab > $O/late1.txt 2>&1 || echo "late1 rc $?"
grep "^parts" $O/late1.txt | awk '{printf "c1 r%s %s %s %s %s | ", $6, $7, $8, $10, $(NF-1)}'; echo
for c in 1 2; do
timeout 100 /tmp/s30c/bin/bench_diag --only decode --steps 4 --batches 64 --wide-flush 1 --parts-c $c --diag-stamps $O/stamps_c$c.txt > $O/diag_c$c.txt 2>&1 || echo "diag rc $?"
done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
