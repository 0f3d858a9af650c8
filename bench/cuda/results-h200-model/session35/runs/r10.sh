#!/bin/bash
# Run 10: `s35g` = the session's code + the decode attention's sequences ranked by context, a
# CTA's units paired long with short (decode_units_order AUTO; 2 = every grid-th unranked, as
# `s35f`). test_cuda_attention; batch 64 at contexts 128-2560 (AUTO against 2); the heavy trace.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s35g && tar xJf .carry/s35g/bin.tar.xz -C /tmp/s35g
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s35g/bin O=/tmp/o10; mkdir -p $O
timeout 60 $B/test_cuda_attention > $O/test_cuda_attention.txt 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.txt)"; grep -m5 FAIL $O/test_cuda_attention.txt
for o in 0 2; do timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 64 --context 2560 --context-spread 128 --attn-order $o > $O/spread.ord$o.txt 2>&1
  echo "spread ord$o: $(grep -E '^[0-9]+ ' $O/spread.ord$o.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"; done
show() { grep -E "^(output tok/s|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
timeout 80 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 --num-seqs 256 --batch-size 64 \
  --min-input-len 128 --max-input-len 2048 --min-output-len 64 --max-output-len 512 --prefill-step 2048 > $O/heavy.txt 2>&1
echo "heavy rc $?: $(show $O/heavy.txt)"
tar czf ${OUT:-/tmp}/r10.tgz -C $O .
