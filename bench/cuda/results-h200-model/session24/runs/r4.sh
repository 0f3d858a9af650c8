#!/bin/bash
# session 24 run 4: is the build of today's HEAD (6a7f632, bench_base) level with s23f's
# (bench_prev, 5054792, the same device code)? Against them: run 3's build (bench_c: empty
# attention CTAs leave before the wait, the merge checks the contexts) and variant e
# (bench_model_cuda: empty CTAs write (-inf, 0) after the wait and leave, the merge unchanged).
# GPU tests of e; three rounds of the four at 1, 2, 4, 8, 16.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24d /tmp/s23f && tar xJf .carry/s24d/bin.tar.xz -C /tmp/s24d && tar xJf .carry/s23f/bin.tar.xz -C /tmp/s23f
B=/tmp/s24d/bin; cp /tmp/s23f/bin/bench_model_cuda $B/bench_prev
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m3 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
V=(prev base c model_cuda)
for r in 0 1 2; do for k in 0 1 2 3; do v=${V[$(( (k + r) % 4 ))]}
  timeout 80 $B/bench_$v --only decode --batches 1,2,4,8,16 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r4.tgz -C $O .
