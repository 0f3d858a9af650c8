#!/bin/bash
# Session 45, run 6: all weight stages before the PDL wait made AUTO up to 16 rows (pre-all: 0 AUTO = 15 up to 16 rows,
# 16 none = the code before). .carry/k45 = this session's commit. pre-all:16 (the old path) against AUTO over the seed
# trace's batch-4 schedule and batch 8; pre-all:15 at batch 32 (past 16 rows AUTO keeps the old path); then the full
# check of the same binary at AUTO: test_cuda_attention, scripts/gpu_model_check.sh --serving.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k45 && tar xJf .carry/k45/bin.tar.xz -C /tmp/k45; B=/tmp/k45/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or6; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b32.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=pre-all:16;; *b8) L=pre-all:16;; *) L=pre-all:15;; esac
  timeout 150 $B/bench_model_cuda --schedule $s --schedule-ab $L --schedule-out $O/$n.csv > $O/$n.txt 2>&1; echo "$n rc $?"
  grep -E "^schedule|all steps|tables of" $O/$n.txt | sed -e 's/schedule bench.*paired A\/B /AB /' -e 's/: [0-9]* steps.*timed pass:/:/' -e 's/step \/ roofline median //'
done
gzip -9 $O/*.csv* 2>/dev/null
L=$O/model; mkdir -p $L
timeout 90 $B/test_cuda_attention > $L/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/test_cuda_attention.log)"
OUT=$L timeout 420 bash scripts/gpu_model_check.sh --bin $B --serving > $L/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/console.txt
grep -E "^(1|4|64) |LM head alone|^batch [0-9]+: (step|the last)" $L/bench_model_cuda.txt
python3 - $L <<'PY'
import csv, gzip, glob, statistics as st, sys
for f in sorted(glob.glob(sys.argv[1] + '/bench_serving_cuda_paged.steps.paged.*.csv.gz')):
    rows = [r for r in csv.DictReader(gzip.open(f, 'rt')) if int(r['rows']) == 4]
    for a in (0, 1):
        sel = [float(r['ratio']) for r in rows if int(r['after_prefill']) == a]
        print(f"{f.split('/')[-1]}: batch-4 steps after_prefill={a}: n {len(sel)} step/roofline median {st.median(sel):.4f}")
PY
tar czf ${OUT:-/tmp}/r6.tgz -C /tmp or6
