#!/bin/bash
# Session 29, run 11: s29g = s29f with each grid-wide counter on its own line and the polls backing off (run 10: the qkv extension 2x slower than the kernels it replaced); the same checks and timings.
cd "$(dirname "$0")/../../../../.."
for v in s28a s29g; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o11; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model; do
  timeout 240 /tmp/s29g/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
grep "fused MLP" $O/test_cuda_model.txt | tail -3
timeout 150 /tmp/s29g/bin/bench_model_cuda --only decode --steps 20 --batches 40,48,56,64 --mlp-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP" $O/mlpab.txt | awk '{printf "%s %s %s %s\n", $3, $5, $7, $(NF-1)}' | paste -sd' ' | fold -w 240
for r in 0 1; do
  for v in s28a s29g; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,48,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|48|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s29g/bin/bench_diag --only decode --steps 4 --batches 64 --diag-stamps $O/stamps.txt > $O/diag.txt 2>&1 || echo "diag rc $?"
python3 bench/cuda/diag_timeline.py $O/stamps.txt > $O/timeline.txt 2>&1; rm -f $O/stamps.txt
sed -n '/layer 18/,/^$/p' $O/timeline.txt
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
