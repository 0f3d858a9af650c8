#!/bin/bash
# session 17 run 8: ncu over one decode step at batch 64 and at batch 4 (session-16 final
# binary; kernels serialized, L2 flushed between them: each kernel's own streaming rate).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17b && tar xJf .carry/s17b/bin.tar.xz -C /tmp/s17b; B=/tmp/s17b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
for b in 64 4; do
  timeout 240 /usr/local/cuda/bin/ncu --clock-control none --profile-from-start off --csv --page raw \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum $B/bench_base --only decode --batches $b --steps 3 > $O/k$b.csv 2> $O/k$b.err || echo "ncu $b rc $?"
  python3 bench/cuda/ncu_summary.py $O/k$b.csv --top 14 > $O/sum$b.txt 2>&1; echo "== batch $b"; cat $O/sum$b.txt
done
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
