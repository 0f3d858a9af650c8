#!/bin/bash
# session 15 run 1: decode attention with several work units per CTA (each warp's K/V ring runs on
# into the next unit; AUTO past one wave of 4-warp CTAs): attention tests, bench-attention at the
# step's shapes (AUTO vs decode-mma-u1-ws in one process, and the session-14 binary), the step
# A/B in one process (--attn-units-ab) and against the session-14 binary
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv > $O/gpu.txt 2>&1
timeout 200 $B/test_cuda_attention > $O/test_attention.log 2>&1; echo "attention rc $? $(tail -n 1 $O/test_attention.log)"
grep -m8 -iE "fail|error" $O/test_attention.log
S=4x640,32x640,48x640,64x512,64x640,96x640,128x512,64x2048,64x8192,16x32768,1x8192
timeout 150 $B/pagellm bench-attention --device cuda --only decode --decode-shapes $S --no-check --iters 60 > $O/ba_new.txt 2>&1 || echo "ba new rc $?"
timeout 100 $B/pagellm_base bench-attention --device cuda --only decode --decode-shapes $S --no-check --iters 60 > $O/ba_base.txt 2>&1 || echo "ba base rc $?"
timeout 120 $B/bench_model_cuda --only decode --batches 4,48,64 --attn-units-ab > $O/bm_ab.txt 2>&1 || echo "bm ab rc $?"
for r in 1 2; do
  for v in base model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 1,4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
echo "== attention us: new AUTO / new u1 / base AUTO (paged) =="
for sh in ${S//,/ }; do b=${sh%x*}; c=${sh#*x}
  n=$(awk -v b=$b -v c=$c '$1=="decode" && $2==b && $4==c && $5=="decode-mma-paged-p128" {print $6; exit}' $O/ba_new.txt)
  u=$(awk -v b=$b -v c=$c '$1=="decode" && $2==b && $4==c && $5=="decode-mma-u1-ws-paged-p128" {print $6; exit}' $O/ba_new.txt)
  o=$(awk -v b=$b -v c=$c '$1=="decode" && $2==b && $4==c && $5=="decode-mma-paged-p128" {print $6; exit}' $O/ba_base.txt)
  echo "$sh: $n / $u / $o"; done
grep "attention units" $O/bm_ab.txt
echo "== step ms (x roofline) =="; for f in $O/bm_base.*.txt $O/bm_model_cuda.*.txt; do echo "$(basename $f): $(grep -E '^(1|4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
