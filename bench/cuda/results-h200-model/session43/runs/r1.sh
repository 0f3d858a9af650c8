#!/bin/bash
# Session 43, run 1: (a) .carry/q43 = the committed code + session 42's merged qkv partials patch
# (next-qkv-parts-16-byte-loads-on-63501f1.diff): test_cuda_backend (both load forms bit for bit), then
# qkv-parts:1 (never: the GEMM sums its own K splits) and qkv-lean:1 (the 4-byte loads) against AUTO over
# the seed trace's batch-4 schedule and session 40's batch-8 schedule; (b) .carry/f43 = the committed code
# + the steps CSV's after_prefill column: the seed trace served (paged, 3 processes, --steps-csv) and its
# schedule replayed (aa, --schedule-out) in the same call, to put served and replayed steps side by side.
cd "$(dirname "$0")/../../../../.."
for v in q43 f43; do mkdir -p /tmp/$v && tar xJf .carry/$v/bin.tar.xz -C /tmp/$v; done
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or1; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
B=/tmp/q43/bin
timeout 120 $B/test_cuda_backend > $O/q43_test_cuda_backend.log 2>&1; echo "q43 test_cuda_backend rc $?: $(tail -1 $O/q43_test_cuda_backend.log)"
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,qkv-parts:1,qkv-lean:1;; *) L=qkv-parts:1,qkv-lean:1;; esac
  timeout 120 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/q43_$n.csv > $O/q43_$n.txt 2>&1; echo "q43 $n rc $?"
  grep -E "^schedule|all steps" $O/q43_$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
B=/tmp/f43/bin
s=$D/session39/seed-trace-steps-cpu.csv
timeout 60 $B/bench_model_cuda --schedule $s --schedule-out $O/f43_replay.csv > $O/f43_replay.txt 2>&1; echo "f43 replay rc $?"
grep -E "all steps" $O/f43_replay.txt
timeout 200 $B/pagellm bench-serving --device cuda --kv-mode paged --shape qwen3-4b --repeats 3 --steps-csv $O/f43_served \
  --json-output $O/f43_served.json > $O/f43_served.txt 2>&1; echo "f43 served rc $?"
grep -E "^output tok/s|^decode step|^full-batch" $O/f43_served.txt
python3 - $O <<'PY'
import csv, glob, statistics as st, sys
O = sys.argv[1]
rep = {int(r['step']): float(r['ms']) for r in csv.DictReader(open(f'{O}/f43_replay.csv'))}
for f in sorted(glob.glob(f'{O}/f43_served.paged.*.csv')):
    rows = [r for r in csv.DictReader(open(f)) if int(r['rows']) == 4]
    for a in (None, 0, 1):
        sel = [r for r in rows if a is None or int(r['after_prefill']) == a]
        ratio = [float(r['ratio']) for r in sel]
        vs = [float(r['ms']) / rep[int(r['step'])] for r in sel if int(r['step']) in rep]
        print(f"{f.split('/')[-1]} after_prefill={a}: n {len(sel)} step/roofline {st.median(ratio):.4f} served/replay {st.median(vs) if vs else 0:.4f}")
PY
gzip -9 $O/*.csv
tar czf ${OUT:-/tmp}/r1.tgz -C /tmp or1
