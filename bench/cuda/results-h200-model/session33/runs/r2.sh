#!/bin/bash
# Run 2: s33a = the committed code + a count per K split in the fused MLP (--mlp-count 2: down's x
# waits only for the 16 CTAs whose h columns its split reads, not for all 128). Test first (a new
# shape whose splits start inside a CTA's columns, both count modes, twice), then batch 64 in
# separate processes, three rounds; two stamped Qwen3-4B steps whose raw stamps are kept (the MLP's
# phase-1 ends, mark 5).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s33a && tar xJf .carry/s33a/bin.tar.xz -C /tmp/s33a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s33a/bin O=/tmp/o2; mkdir -p $O
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m8 FAIL $O/test_cuda_backend.txt
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run 4b.base.$r 64; run 4b.c2.$r 64 --mlp-count 2; run 4b.fkc2.$r 64 --mlp-count 2 --fullk 1
  run 8b.base.$r 64 --shape qwen3-8b; run 8b.c2.$r 64 --shape qwen3-8b --mlp-count 2
  run 17.base.$r 64 --shape qwen3-1.7b; run 17.c2.$r 64 --shape qwen3-1.7b --mlp-count 2
done
for v in base c2; do
  a=""; [ $v = c2 ] && a="--mlp-count 2"
  timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 $a --diag-stamps $O/stamps_$v.txt > $O/diag_$v.txt 2>&1 || echo "diag $v rc $?"
done
gzip $O/stamps_*.txt
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
