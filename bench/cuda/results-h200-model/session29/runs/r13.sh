#!/bin/bash
# Session 29, run 13: s29i = the fused MLP, the MLP only (no qkv extension), AUTO from 57 rows:
# the four GPU tests; s29i against s28a (ccb8582) at batches 4, 16, 32, 56, 64, separate
# processes, two rounds; --mlp-ab at 56-64; a shortened heavy trace (96 requests, batch 64,
# prompts 128-512, outputs 64-128) through pagellm bench-serving with both builds.
cd "$(dirname "$0")/../../../../.."
for v in s28a s29i; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o13; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 /tmp/s29i/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
grep "fused MLP launches" $O/test_cuda_model.txt
for r in 0 1; do
  for v in s28a s29i; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,16,32,56,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|56|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
timeout 100 /tmp/s29i/bin/bench_model_cuda --only decode --steps 20 --batches 56,60,64 --mlp-ab > $O/mlpab.txt 2>&1 || echo "mlpab rc $?"
grep "^MLP" $O/mlpab.txt | awk '{printf "%s %s %s %s\n", $3, $5, $7, $(NF-1)}' | paste -sd' ' | fold -w 240
for v in s28a s29i; do
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --num-seqs 96 --batch-size 64 \
    --min-input-len 128 --max-input-len 512 --min-output-len 64 --max-output-len 128 --json-output $O/serve_$v.json > $O/serve_$v.txt 2>&1
  echo "serve $v rc $?"; grep -E "^trace:|^output tok/s|^decode step|^roofline ceiling" $O/serve_$v.txt
done
gzip -9f $O/serve_*.json
tar czf ${OUT:-/tmp}/r13.tgz -C $O .
