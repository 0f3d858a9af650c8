#!/bin/bash
# Session 46, run 5: the full check of the host-ranked decode attention (.carry/k46e = this session's commit bb91ead,
# with session 45's bench_model_cuda beside it as bench_model_cuda_k45). First the seed trace's batch-4 schedule
# replayed by session 45's bench (HEAD before) and this one in
# separate processes, three interleaved rounds (batch 4 takes one unit per CTA: nothing ranked, but the kernel's unit
# carries its table row now); then test_cuda_attention and scripts/gpu_model_check.sh --serving.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46e && tar xJf .carry/k46e/bin.tar.xz -C /tmp/k46e; B=/tmp/k46e/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r5; rm -rf $O; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
s=$D/session39/seed-trace-steps-cpu.csv
for r in 1 2 3; do
  for v in k45 k46d; do
    x=$B/bench_model_cuda; [ $v = k45 ] && x=$B/bench_model_cuda_k45
    timeout 60 $x --schedule $s > $O/seed_${v}_$r.txt 2>&1 || echo "$v $r rc $?"
    echo "round $r $v: $(grep -E 'all steps' $O/seed_${v}_$r.txt | sed 's/.*median //')"
  done
done
L=$O/model; mkdir -p $L
timeout 90 $B/test_cuda_attention > $L/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/test_cuda_attention.log)"
OUT=$L timeout 400 bash scripts/gpu_model_check.sh --bin $B --serving > $L/console.txt 2>&1; echo "model check rc $?"
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
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp o46r5
