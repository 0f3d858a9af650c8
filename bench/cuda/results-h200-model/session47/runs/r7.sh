#!/bin/bash
# Session 47, run 7: the full check of this session's code (.carry/k47f: the add + RMSNorm of partials with two CTAs
# per row as AUTO, and a decode step's last residual add and final norm as one op; HEAD e2b7492's bench_model_cuda
# beside it as bench_head, the stamped build as bench_diag). The seed schedule and the model benchmark's batches 4 and
# 64 by HEAD and this build in separate processes, interleaved; test_cuda_attention; scripts/gpu_model_check.sh
# --serving; one stamped batch-64 step.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k47f && tar xJf .carry/k47f/bin.tar.xz -C /tmp/k47f; B=/tmp/k47f/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o47r7; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session39/seed-trace-steps-cpu.csv
for r in 1 2; do
  for v in head new; do
    x=$B/bench_model_cuda; [ $v = head ] && x=$B/bench_head
    timeout 60 $x --schedule $s > $O/seed_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "seed round $r $v: $(grep -E 'all steps' $O/seed_${v}_$r.txt | sed 's/.*median //')"
    timeout 120 $x --only decode --batches 4,64 --steps 20 > $O/model_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "model round $r $v: $(grep -E '^ *(4|64) ' $O/model_${v}_$r.txt | awk '{printf "b%s %s ms %sx; ", $1, $3, $6}')"
  done
done
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
timeout 100 $B/bench_diag --only decode --batches 64 --steps 5 --diag-stamps $O/stamps64.txt > $O/diag64.txt 2>&1 || echo "diag rc $?"
python3 bench/cuda/diag_timeline.py $O/stamps64.txt --step 2 --layer 18 --copy 4200 > $O/timeline64_l18.txt 2>&1
gzip -9 $O/stamps64.txt; sed -n 1,22p $O/timeline64_l18.txt
tar czf ${OUT:-/tmp}/r7.tgz -C /tmp o47r7
