#!/bin/bash
# session 18 run 2: one 4-warp attention CTA per SM past one wave (4 units per CTA at batch 64,
# 3 at 48: 128 CTAs), so the next GEMM's CTA (97 KiB) fits beside it and loads its first weight
# stages during the attention; --attn-units-n N (AUTO against N units per CTA, three rounds)
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s18b && tar xJf .carry/s18b/bin.tar.xz -C /tmp/s18b; B=/tmp/s18b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
timeout 100 $B/bench_model_cuda --only decode --batches 64 --attn-units-n 4 > $O/u4_64.txt 2>&1 || echo "u4 rc $?"
timeout 100 $B/bench_model_cuda --only decode --batches 64 --attn-units-n 3 > $O/u3_64.txt 2>&1 || echo "u3 rc $?"
timeout 100 $B/bench_model_cuda --only decode --batches 48 --attn-units-n 3 > $O/u3_48.txt 2>&1 || echo "u3 48 rc $?"
timeout 100 $B/bench_model_cuda --only decode --batches 32 --attn-units-n 2 > $O/u2_32.txt 2>&1 || echo "u2 32 rc $?"
grep -h "attention units" $O/*.txt
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
