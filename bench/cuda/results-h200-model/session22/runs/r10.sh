#!/bin/bash
# session 22 run 10: the final binary against base (the session-21 code) once more, five
# interleaved rounds at batches 2, 4 and 16.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s22k && tar xJf .carry/s22k/bin.tar.xz -C /tmp/s22k; B=/tmp/s22k/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o10; mkdir -p $O
V=(base model_cuda)
for r in 0 1 2 3 4; do for k in 0 1; do v=${V[$(( (k + r) % 2 ))]}
  timeout 60 $B/bench_$v --only decode --batches 2,4,16 > $O/ab_$v.$r.txt 2>&1 || echo "ab $v rc $?"
  echo "ab_$v.$r: $(grep -E '^(2|4|16) ' $O/ab_$v.$r.txt | awk '{printf "B%s %s (%s) | ", $1, $3, $6}')"
done; done
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
