#!/bin/bash
# Run 1: `s38a` = the committed code + the contexts rule past one wave (decode_split_waves: one
# unit per CTA, split-major, so the CTAs of splits past the shorter contexts come last) and a
# bound on the units holding keys (decode_keyed_max). test_cuda_attention (incl. the waves path);
# batches 3-5 at unequal contexts over a 2048-key table, rules contexts / waves / waves with 158
# keyed units; the seed trace, 2 processes per rule, steps to CSV.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38a && tar xJf .carry/s38a/bin.tar.xz -C /tmp/s38a; B=/tmp/s38a/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 120 $B/test_cuda_attention > $O/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.log)"
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for a in "--context 1100 --context-spread 500" "--context 1060 --context-spread 300" "--context 1300" "--context 760 --context-spread 500"; do
  for r in "contexts" "waves" "waves --attn-keyed-max 158"; do
    n=$(echo $a $r | tr -d ' -'); timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-splits-from $r > $O/$n.txt 2>&1 || echo "$n rc $?"
    echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done
for rep in 0 1; do for r in "contexts" "waves" "waves --cuda-attn-keyed-max 158"; do
  n=seed.$(echo $r | tr -d ' -').$rep
  timeout 150 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 1 \
    --cuda-attn-splits $r --steps-csv $O/steps.$n > $O/$n.txt 2>&1; echo "$n rc $?: $(show $O/$n.txt)"
  python3 - $O/steps.$n.paged.*.csv <<'PY'
import csv, sys, statistics as st
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
four = [float(r['ratio']) for r in rows if int(r['rows']) == 4]
print(f"  4-row steps {len(four)}: median ratio {st.median(four):.4f}, all {st.median([float(r['ratio']) for r in rows]):.4f}")
PY
done; done
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp o1
