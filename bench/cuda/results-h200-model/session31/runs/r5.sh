#!/bin/bash
# Session 31, run 5: s31e = the committed form (the fused MLP sends a third of its weight ring
# before its PDL wait; --mlp-pre 6 = the whole ring, as s30h): the four GPU tests; s30h, s31e
# and s31e --mlp-pre 6 at batches 4-64, three rounds, separate processes; the shortened heavy
# serving trace with s30h and s31e.
cd "$(dirname "$0")/../../../../.."
for v in s30h s31e; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o5; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine test_cuda_attention; do
  timeout 200 /tmp/s31e/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m5 -i "FAIL" $O/$t.txt
done
run() { # name bin args...
  local n=$1 b=$2; shift 2
  timeout 100 /tmp/$b/bin/bench_model_cuda --only decode --steps 20 --batches 4,16,56,64 "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^(4|16|56|64) ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do
  run base.$r s30h
  run e.$r s31e
  run e6.$r s31e --mlp-pre 6
done
for v in s30h s31e; do
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --num-seqs 96 --batch-size 64 \
    --min-input-len 128 --max-input-len 512 --min-output-len 64 --max-output-len 128 --json-output $O/serve_$v.json > $O/serve_$v.txt 2>&1
  echo "serve $v rc $?"; grep -E "^trace:|^output tok/s|^decode step|^roofline ceiling" $O/serve_$v.txt
done
gzip -9f $O/serve_*.json
tar czf ${OUT:-/tmp}/r5.tgz -C $O .
