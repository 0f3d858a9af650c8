#!/bin/bash
# Session 30, run 8: s30h = the committed form (the o projection of 57-64 rows as the wide
# kernel, its partials added by the norm; the experiments of runs 2-7 removed): the four GPU
# tests; s30h against s29j (the code before) at batches 4-64, two rounds, separate processes;
# the wide kernel forced and never at 32-56; a shortened heavy serving trace with both builds.
cd "$(dirname "$0")/../../../../.."
for v in s29j s30h; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o8; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 /tmp/s30h/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
grep "launches" $O/test_cuda_model.txt
for r in 0 1; do
  for v in s29j s30h; do
    timeout 100 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 --batches 4,16,32,48,56,64 > $O/$v.$r.txt 2>&1 || echo "$v.$r rc $?"
    echo "$v.$r: $(grep -E '^(4|16|32|48|56|64) ' $O/$v.$r.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
for w in 1 2; do
  timeout 100 /tmp/s30h/bin/bench_model_cuda --only decode --steps 20 --batches 32,48,56 --wide $w > $O/wide$w.txt 2>&1 || echo "wide$w rc $?"
  echo "wide $w: $(grep -E '^(32|48|56) ' $O/wide$w.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done
for v in s29j s30h; do
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --num-seqs 96 --batch-size 64 \
    --min-input-len 128 --max-input-len 512 --min-output-len 64 --max-output-len 128 --json-output $O/serve_$v.json > $O/serve_$v.txt 2>&1
  echo "serve $v rc $?"; grep -E "^trace:|^output tok/s|^decode step|^roofline ceiling" $O/serve_$v.txt
done
gzip -9f $O/serve_*.json
tar czf ${OUT:-/tmp}/r8.tgz -C $O .
