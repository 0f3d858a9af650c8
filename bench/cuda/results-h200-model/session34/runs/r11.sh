#!/bin/bash
# Run 11: `s34h` = run 9's build with the slim own-sum kernel held to 128 registers
# (__launch_bounds__(160, 3); 340 bytes of spill loads, in the sum): if two of its warps on one SM
# sub-partition left no room for an attention warp's 232 registers in run 9, the attention's CTAs
# now enter at qkv's start. A stamped batch-64 step with --fullk 3 (entries against qkv's end),
# test_cuda_backend, then batch 64 default against --fullk 3, two rounds.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34h && tar xJf .carry/s34h/bin.tar.xz -C /tmp/s34h
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34h/bin O=/tmp/o11; mkdir -p $O
timeout 60 $B/bench_diag --only decode --steps 4 --batches 64 --fullk 3 --diag-stamps $O/stamps_ws.txt > $O/diag_ws.txt 2>&1 || echo "diag rc $?"
python3 bench/cuda/diag_timeline.py $O/stamps_ws.txt > $O/timeline_ws.txt 2>&1; gzip $O/stamps_ws.txt
python3 bench/cuda/results-h200-model/session34/runs/att_entry.py $O/stamps_ws.txt.gz > $O/att_entry_ws.txt 2>&1; head -4 $O/att_entry_ws.txt
sed -n 14,22p $O/timeline_ws.txt
timeout 100 $B/test_cuda_backend > $O/test_cuda_backend.txt 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.txt)"; grep -m5 FAIL $O/test_cuda_backend.txt
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1; do run base.$r 64; run ws3.$r 64 --fullk 3; done
mv $O/stamps_ws.txt.gz /tmp/
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
