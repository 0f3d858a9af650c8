#!/bin/bash
# Session 39, run 7: 256-key splits past 1.5 one-unit CTAs per SM replaced by the most splits of at most 384 keys
# within 1.5 per SM (batch 4 over a 2048-key table: 6 of 384). .carry/h1 = that rule, .carry/f1 = without it.
# test_cuda_attention and test_cuda_backend on h1; the seed trace f1, h1, h1, f1 with steps to CSV, by band of table width.
cd "$(dirname "$0")/../../../../.."
for v in f1 h1; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or7; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_attention test_cuda_backend; do
  timeout 150 env PL_CUDA_TEST_BIG=1 /tmp/h1/bin/$t > $O/$t.log 2>&1; echo "$t rc $?: $(tail -1 $O/$t.log)"
done
show() { grep -E "^(output tok/s|full-batch decode step / its)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in f1 h1 h1 f1; do
  n=seed.$v.$((k++))
  timeout 150 /tmp/$v/bin/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --steps-csv $O/steps.$n > $O/$n.txt 2>&1; echo "$n rc $?: $(show $O/$n.txt)"
  python3 - $O/steps.$n.paged.*.csv <<'PY'
import csv, sys, statistics as st
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
four = [r for r in rows if int(r['rows']) == 4]
big = [float(r['ratio']) for r in four if max(int(c) for c in r['contexts'].split(';')) > 1024]
small = [float(r['ratio']) for r in four if max(int(c) for c in r['contexts'].split(';')) <= 1024]
print(f"  4-row {st.median(float(r['ratio']) for r in four):.4f}; table 2048: {st.median(big):.4f} (n {len(big)}), 1024: {st.median(small):.4f} (n {len(small)})")
PY
done
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp or7
