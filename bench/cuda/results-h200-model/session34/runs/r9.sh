#!/bin/bash
# Run 9: `s34f` = the committed code + the slim wide kernel adding its own K splits for the qkv
# projection (`--fullk 3`: 96-row tiles x 2-3 splits, 105 KiB and 170 registers, so that a
# decode-attention CTA of several units fits beside each; the tile's last split adds the planes
# and stores bf16 qkv). test_cuda_backend (a new test_wide_sum_proj), test_cuda_model; batch 64
# of Qwen3-4B / -8B / -1.7B, the default against --fullk 3, three rounds; batch 4 too (level: not
# run there); a stamped Qwen3-4B batch-64 step with --fullk 3.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34f && tar xJf .carry/s34f/bin.tar.xz -C /tmp/s34f
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34f/bin O=/tmp/o9; mkdir -p $O
for t in test_cuda_backend test_cuda_model; do
  timeout 150 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 -E "FAIL|wide \+ own" $O/$t.txt
done
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run 4b.base.$r 4,64; run 4b.ws.$r 4,64 --fullk 3
  run 8b.base.$r 64 --shape qwen3-8b; run 8b.ws.$r 64 --shape qwen3-8b --fullk 3
  run 17.base.$r 64 --shape qwen3-1.7b; run 17.ws.$r 64 --shape qwen3-1.7b --fullk 3
done
timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 --fullk 3 --diag-stamps $O/stamps_ws.txt > $O/diag_ws.txt 2>&1 || echo "diag rc $?"
python3 bench/cuda/diag_timeline.py $O/stamps_ws.txt > $O/timeline_ws.txt 2>&1; gzip $O/stamps_ws.txt
sed -n 3,30p $O/timeline_ws.txt
tar czf ${OUT:-/tmp}/r9.tgz -C $O .
