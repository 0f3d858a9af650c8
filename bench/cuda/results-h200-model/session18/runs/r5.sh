#!/bin/bash
# session 18 run 5: staged uploads by a one-CTA kernel reading the pinned bytes instead of
# cudaMemcpyAsync (memcpy nodes in the step's graphs; run 4: four cost ~7 us of launch-call host
# time). Tests on the new build; --upload-ab at batch 4/64; prev (run 3's build: memcpy nodes)
# against new in interleaved rounds with the step breakdown.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s18e && tar xJf .carry/s18e/bin.tar.xz -C /tmp/s18e; B=/tmp/s18e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
for t in backend model engine; do timeout 240 $B/test_cuda_$t > $O/test_$t.log 2>&1; echo "$t rc $? $(tail -n 1 $O/test_$t.log)"; grep -m6 -iE "fail|error" $O/test_$t.log; done
timeout 100 $B/bench_model_cuda --only decode --batches 1,4,64 --upload-ab > $O/upload_ab.txt 2>&1 || echo "ab rc $?"
grep "staged uploads" $O/upload_ab.txt
V=(prev model_cuda)
for r in 0 1 2; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 120 $B/bench_$v --only decode --batches 1,4,64 > $O/bm_$v.$r.txt 2>&1 || echo "bm $v rc $?"; done; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^(1|4|64) ' $f | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"; done
for f in $O/bm_*.txt; do echo "$(basename $f): $(grep -E '^batch (1|4|64): step' $f | sed 's/ (means.*//; s/batch //; s/: step / /; s/(median) = //; s/host walk/walk/; s/first graph launch call/launch/; s/graphs on the device/graphs/' | tr '\n' '|')"; done
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
