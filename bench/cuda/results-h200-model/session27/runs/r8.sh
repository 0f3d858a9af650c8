#!/bin/bash
# session 27 run 8: the decode attention's online softmax skips the 8-row half that holds no query
# row (decode chunks of up to 8 rows) and the accumulator rescale when no row's max moved (build s27e):
# test_cuda_attention; the kernel alone (bench-attention 4x512, 64x512, 64x8192) and decode steps at
# batches 1, 4, 8, 64 against ed5b096's build (s26a), separate processes, 3 rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a /tmp/s27e && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a && tar xJf .carry/s27e/bin.tar.xz -C /tmp/s27e
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
timeout 200 /tmp/s27e/bin/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.txt)"
for v in s26a s27e; do
  timeout 60 /tmp/$v/bin/pagellm bench-attention --device cuda --only decode --decode-shapes 4x512,64x512,64x8192 > $O/att_$v.txt 2>&1 || echo "att $v rc $?"
  echo "$v:"; awk '$5 == "decode-mma" {print "  " $2 "x" $4 " " $6 " us"}' $O/att_$v.txt
done
for r in 0 1 2; do
  for v in s26a s27e; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 1,4,8,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(1|4|8|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
