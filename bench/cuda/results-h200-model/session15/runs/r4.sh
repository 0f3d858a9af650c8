#!/bin/bash
# session 15 run 4: several units per CTA (AUTO) against one (decode_units_per_cta 1) once more, final
# build: three processes of --attn-units-ab at batch 48 and 64 (9 rounds, orders alternating),
# bench-attention at the large-batch shapes twice (decode-mma = AUTO, decode-mma-u1-ws = one unit)
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15r/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
for r in 1 2 3; do
  timeout 120 $B/bench_model_cuda --only decode --batches 48,64 --attn-units-ab --steps 30 > $O/bm_ab.$r.txt 2>&1 || echo "bm ab rc $?"
done
S=48x640,64x512,64x640,96x640,128x512,64x2048
for r in 1 2; do
  timeout 100 $B/pagellm bench-attention --device cuda --only decode --decode-shapes $S --no-check --iters 100 > $O/ba.$r.txt 2>&1 || echo "ba rc $?"
done
grep -h "attention units" $O/bm_ab.*.txt
for r in 1 2; do grep -E "decode-mma-paged-p128|decode-mma-u1-ws-paged" $O/ba.$r.txt | awk '{print $2"x"$4, $5, $6}'; done
tar czf $O/run4.tgz -C $O $(cd $O && ls *.txt)
true
