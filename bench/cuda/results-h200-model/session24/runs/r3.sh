#!/bin/bash
# session 24 run 3: run 2's change with the merge kernel loading every split again (the
# context length read beside the loads, before the PDL wait with early_kv) - bench_model_cuda;
# the same merge without the early exit - bench_merge_only; GPU tests of the former; three
# rounds of prev / both / merge only at 1, 2, 4, 8.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s24c /tmp/s23f && tar xJf .carry/s24c/bin.tar.xz -C /tmp/s24c && tar xJf .carry/s23f/bin.tar.xz -C /tmp/s23f
B=/tmp/s24c/bin; cp /tmp/s23f/bin/bench_model_cuda $B/bench_prev
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o3; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend; do
  timeout 200 $B/$t > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; grep -m3 -i "fail" $O/$t.txt | grep -v " 0 failed"
done
V=(prev model_cuda merge_only)
for r in 0 1 2; do for k in 0 1 2; do v=${V[$(( (k + r) % 3 ))]}
  timeout 80 $B/bench_$v --only decode --batches 1,2,4,8 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(1|2|4|8|16|32|64) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r3.tgz -C $O .
