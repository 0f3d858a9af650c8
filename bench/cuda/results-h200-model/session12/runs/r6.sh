#!/bin/bash
# session 12 run 6: tile GEMM smem per token tile (73 KiB up to 16 rows, 3 CTAs/SM) + decode attention 2-stage rings: tests, A/Bs
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_attention > $O/test_attention.log 2>&1; echo "attention rc $? $(tail -n 1 $O/test_attention.log)"
grep -m5 -i "fail" $O/test_attention.log
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
timeout 120 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
for r in 1 2; do
  for v in base model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 2,4,8,16,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
timeout 150 $B/bench_model_cuda --only decode --batches 4,8,16 --attn-stages-ab > $O/stages_ab.txt 2>&1; echo "stages rc $?"
echo "== step ms (x roofline) =="; for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(2|4|8|16|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
grep -E "^attention ring" $O/stages_ab.txt
