#!/bin/bash
# Run 5: `s36b` = the committed library + bench_model_cuda --tile-ctas N (the tile GEMM's K split aimed
# at N CTAs per SM for the whole run; at batch 4 only the qkv projection is a split tile GEMM, so 1
# gives it 96 CTAs instead of 240 and leaves room beside them for the decode attention's CTAs).
# Separate processes, two rounds: batches 2-16 at context 512, default against --tile-ctas 1; batch 4
# at contexts 512 and 1024 with --attn-splits 4, alone and with --tile-ctas 1.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s36b && tar xJf .carry/s36b/bin.tar.xz -C /tmp/s36b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s36b/bin O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
run() { # name args...
  local n=$1; shift
  timeout 90 $B/bench_model_cuda --only decode --steps 20 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do
  run def.$r --batches 2,4,6,8,12,16
  run t1.$r --batches 2,4,6,8,12,16 --tile-ctas 1
done
for r in 0 1; do for c in 512 1024; do
  run c$c.def.$r --batches 4 --context $c
  run c$c.t1.$r --batches 4 --context $c --tile-ctas 1
  run c$c.s4.$r --batches 4 --context $c --attn-splits 4
  run c$c.t1s4.$r --batches 4 --context $c --tile-ctas 1 --attn-splits 4
done; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
