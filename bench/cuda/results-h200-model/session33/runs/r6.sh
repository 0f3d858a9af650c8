#!/bin/bash
# Run 6: the committed code (`s33b`) at other contexts: batches 4 and 64 with --context 256, 1024
# and 2048 (the targets are read at 512), two rounds, separate processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s33b && tar xJf .carry/s33b/bin.tar.xz -C /tmp/s33b
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s33b/bin O=/tmp/o6; mkdir -p $O
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 90 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s ctx %s %s (%s)  ", $1, $2, $3, $6}')"
}
for r in 0 1; do
  for c in 256 512 1024 2048; do run c$c.$r 4,64 --context $c; done
done
tar czf ${OUT:-/tmp}/r6.tgz -C $O .
