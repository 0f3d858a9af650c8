#!/bin/bash
# session 24 run 6: the uploads as graph roots, with a test hook counting them:
# test_cuda_model (graphs_vs_eager in both orders, the count asserted), test_cuda_engine,
# test_cuda_backend; step timelines (-DPL_DIAG_STAMPS build) at batches 4 and 64 with the
# uploads first (--upload-order 0) and where captured (1); two rounds against HEAD's build.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24i && tar xJf .carry/s24i/bin.tar.xz -C /tmp/s24i; B=/tmp/s24i/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_model test_cuda_engine test_cuda_backend; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m3 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
grep "^graphs" $O/test_cuda_model.txt
for u in 0 1; do
  timeout 120 $B/bench_diag --only decode --batches 4,64 --steps 8 --upload-order $u --diag-stamps $O/stamps_u$u.txt > $O/steps_diag_u$u.txt 2>&1 || echo "diag $u rc $?"
  python3 bench/cuda/diag_timeline.py $O/stamps_u$u.txt --step 2 > $O/timeline_u$u.txt 2>&1
  awk '$2 == 2' $O/stamps_u$u.txt | gzip -9 > $O/stamps_u${u}_step2.txt.gz; rm -f $O/stamps_u$u.txt
  echo "== upload order $u:"; grep -E "^== batch|first entry" $O/timeline_u$u.txt | head -4
done
V=(base model_cuda)
for r in 0 1; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 80 $B/bench_$v --only decode --batches 1,4,64 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
grep "uploads made graph roots" $O/ab_model_cuda.0.txt | head -3
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
