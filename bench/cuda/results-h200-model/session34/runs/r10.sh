#!/bin/bash
# Run 10: `s34g` = run 9's build + --fullk 4: the same own sums in the wide kernel's 168 KiB form
# (160-row tiles x 3 splits, 6 + 6 slots; beside it no attention CTA fits, 255 registers with a
# few spills in the sum). Batch 64 of Qwen3-4B / -8B, the default against --fullk 3 and 4, three
# rounds, separate processes.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34g && tar xJf .carry/s34g/bin.tar.xz -C /tmp/s34g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34g/bin O=/tmp/o10; mkdir -p $O
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run 4b.base.$r 64; run 4b.ws3.$r 64 --fullk 3; run 4b.ws4.$r 64 --fullk 4
  run 8b.base.$r 64 --shape qwen3-8b; run 8b.ws4.$r 64 --shape qwen3-8b --fullk 4
done
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
