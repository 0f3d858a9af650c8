#!/bin/bash
# Run 1: `s35a` = the committed code + pl_model_finish after every prefill chunk (the chunk's device
# time stops leaking into the next decode step's timer) + a "rows per decode call" field.
# test_cuda_model (new: headless_chunk_finish) and test_cuda_engine; then bench-serving on the seed
# trace (paged) and the heavy trace, new (s35a) against the committed build (s34a), one process each.
cd "$(dirname "$0")/../../../../.."
for b in s34a s35a; do mkdir -p /tmp/$b && tar xJf .carry/$b/bin.tar.xz -C /tmp/$b; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_model test_cuda_engine; do
  timeout 200 /tmp/s35a/bin/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
show() { grep -E "^(prefill tok/s|output tok/s|decode step median|decode step / its|decode step roofline, median|rows per decode|decode calls|decode gap median)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for b in s35a s34a; do
  timeout 150 /tmp/$b/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --json-output $O/seed.$b.json > $O/seed.$b.txt 2>&1; echo "seed $b rc $?: $(show $O/seed.$b.txt)"
done
for b in s35a s34a; do
  timeout 200 /tmp/$b/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --num-seqs 256 --batch-size 64 --min-input-len 128 --max-input-len 2048 --min-output-len 64 --max-output-len 512 \
    --json-output $O/heavy.$b.json > $O/heavy.$b.txt 2>&1; echo "heavy $b rc $?: $(show $O/heavy.$b.txt)"
done
gzip -9 $O/heavy.*.json
tar czf ${OUT:-/tmp}/r1.tgz -C $O .
