#!/bin/bash
# Session 39, run 6: the rope kernel, not the fused rope, before a decode attention of one-unit CTAs past
# 1.5 per SM (AUTO; batch 4 over a 2048-key table). .carry/g1 = that rule, .carry/f1 = without it (run 4's).
# GPU tests on g1; the seed trace f1, g1, g1, f1 with steps to CSV, read by band of table width through
# ../seed-trace-steps-cpu.csv's contexts; the model benchmark at trace shapes, batch 4 at 512, batch 64 at 512.
cd "$(dirname "$0")/../../../../.."
for v in f1 g1; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or6; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 150 env PL_CUDA_TEST_BIG=1 /tmp/g1/bin/$t > $O/$t.log 2>&1; echo "$t rc $?: $(tail -1 $O/$t.log)"
done
show() { grep -E "^(output tok/s|full-batch decode step / its)" $1 | sed 's/  */ /g' | tr '\n' ';'; echo; }
for v in f1 g1 g1 f1; do
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
for c in "--contexts 1033,838,688,304" "--contexts 1069,874,724,220" "--contexts 1100,1100,1100,1100" "--batches 4,64 --context 512"; do
  for v in f1 g1; do
    n=$(echo "$v $c" | tr -d ' -' | tr ',' '_'); timeout 90 /tmp/$v/bin/bench_model_cuda --only decode --steps 20 $c > $O/$n.txt 2>&1 || echo "$n rc $?"
    echo "$v $c: $(grep -E '^(4|64) ' $O/$n.txt | awk '{print "B"$1" "$3" ms "$6"x"}' | tr '\n' ' ')"
  done
done
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp or6
