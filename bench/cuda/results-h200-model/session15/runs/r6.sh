#!/bin/bash
# session 15 run 6: greedy sampling without the upload and the copy back (argmax keys kept zero on
# the device, token ids written into mapped pinned host memory): the GPU model tests, and three
# interleaved processes against the committed build (bench_prev) at batch 1/4/64 (the step and its
# breakdown with "the rest" after the graph)
cd "$(dirname "$0")/../../../../.."
B=$PWD/.carry/s15r/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 150 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m8 -i "fail" $O/test_backend.log
timeout 150 env PL_CUDA_TEST_BIG=1 $B/test_cuda_model > $O/test_model.log 2>&1; echo "model rc $? $(tail -n 1 $O/test_model.log)"
grep -m5 -i "fail" $O/test_model.log
timeout 150 $B/test_cuda_engine > $O/test_engine.log 2>&1; echo "engine rc $? $(tail -n 1 $O/test_engine.log)"
grep -m5 -i "fail" $O/test_engine.log
for r in 1 2 3; do
  for v in prev model_cuda; do
    timeout 100 $B/bench_$v --only decode --batches 1,4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"
  done
done
echo "== step ms (x roofline) | the rest after the graph =="
for f in $O/bm_prev.*.txt $O/bm_model_cuda.*.txt; do echo "$(basename $f): $(grep -E '^(1|4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}') rest: $(grep -oE 'the rest [0-9.]+ us' $f | awk '{printf "%s ", $3}')"; done
tar czf $O/run6.tgz -C $O $(cd $O && ls *.txt *.log)
true
