#!/bin/bash
# Run 2: `s38b` = s38a + decode_split_major forced (`--attn-splits-from major`: the contexts rule,
# units split-major in one wave, so the CTAs of late splits, empty in shorter contexts, come last).
# test_cuda_attention; batch 4 at uniform and unequal contexts over 1024- and 2048-key tables,
# contexts against major, two rounds; the seed trace, 2 processes each, steps to CSV.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38b && tar xJf .carry/s38b/bin.tar.xz -C /tmp/s38b; B=/tmp/s38b/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 120 $B/test_cuda_attention > $O/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.log)"
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for k in 0 1; do for a in "--context 1100" "--context 1100 --context-spread 500" "--context 1100 --context-spread 900" "--context 1000 --context-spread 500" "--context 1300"; do
  for r in contexts major; do
    n=$(echo $a $r | tr -d ' -').$k; timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 4 $a --attn-splits-from $r > $O/$n.txt 2>&1 || echo "$n rc $?"
    echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done; done
for rep in 0 1; do for r in contexts major; do
  n=seed.$r.$rep
  timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --cuda-attn-splits $r --steps-csv $O/steps.$n > $O/$n.txt 2>&1; echo "$n rc $?: $(show $O/$n.txt)"
  python3 - $O/steps.$n.paged.*.csv <<'PY'
import csv, sys, statistics as st
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
four = [float(r['ratio']) for r in rows if int(r['rows']) == 4]
lng = [float(r['ratio']) for r in rows if int(r['rows']) == 4 and int(r['context_tokens']) >= 4 * 576]
print(f"  4-row steps {len(four)}: median ratio {st.median(four):.4f} (mean context >= 576: {st.median(lng):.4f}, n {len(lng)}), all {st.median([float(r['ratio']) for r in rows]):.4f}")
PY
done; done
tar czf ${OUT:-/tmp}/r2.tgz -C /tmp o2
