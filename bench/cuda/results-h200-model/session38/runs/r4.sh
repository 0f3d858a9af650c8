#!/bin/bash
# Run 4: `s38e` = s38b + the decode attention's ring full before its first tile (each stage
# refilled once its tile is computed, so kStages tiles per warp go out before the PDL wait, not
# kStages - 1), the default; `--attn-splits-from ringold` the code before. test_cuda_attention
# and test_cuda_backend; batches 3-5 and 64 at several contexts, new against old, two rounds;
# the seed trace, 2 processes each, steps to CSV.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s38e && tar xJf .carry/s38e/bin.tar.xz -C /tmp/s38e; B=/tmp/s38e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o4; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
timeout 120 $B/test_cuda_attention > $O/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $O/test_cuda_attention.log)"
timeout 200 $B/test_cuda_backend > $O/test_cuda_backend.log 2>&1; echo "test_cuda_backend rc $?: $(tail -1 $O/test_cuda_backend.log)"
show() { grep -E "^(output tok/s|decode step median|decode step / its|full-batch decode)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for k in 0 1; do for a in "--context 512" "--context 640" "--context 900" "--context 1000 --context-spread 500" "--context 1100 --context-spread 500"; do
  for r in contexts ringold; do
    n=$(echo $a $r | tr -d ' -').$k; timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 3,4,5 $a --attn-splits-from $r > $O/$n.txt 2>&1 || echo "$n rc $?"
    echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
  done
done; done
for r in contexts ringold contexts ringold; do
  n=b64.$r.$((k++)); timeout 40 $B/bench_model_cuda --only decode --steps 20 --batches 64 --context 512 --attn-splits-from $r > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
done
for rep in 0 1; do for r in contexts ringold; do
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
tar czf ${OUT:-/tmp}/r4.tgz -C /tmp o4
