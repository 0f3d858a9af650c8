#!/bin/bash
# Session 44, run 5: run 4's ring 6 (the committed kernel asking 224 bytes more shared memory) read 0.9976; does more
# shared memory a k-sliced CTA asks for (other kernels' CTAs kept off an SM holding two) pay? .carry/k44 = 22f0140 +
# pl_cuda_gemv_ws.kslice_smem (hook kslice-smem:KiB, AUTO none; 16 = the most two CTAs per SM leave, 15.97 KiB).
# kslice-smem 1, 8, 16 against AUTO over the seed trace's batch-4 schedule (1 and 16 twice), 1 and 16 over session 40's
# batch 8 schedule, 16 over batch 2; then the full check of the same binary at AUTO (= the committed code's path):
# test_cuda_attention, scripts/gpu_model_check.sh --serving.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k44 && tar xJf .carry/k44/bin.tar.xz -C /tmp/k44; B=/tmp/k44/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O; D=bench/cuda/results-h200-model
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for s in $D/session39/seed-trace-steps-cpu.csv $D/session40/sched-b8.csv $D/session40/sched-b2.csv; do
  n=$(basename $s .csv)
  case $n in seed*) L=aa,kslice-smem:1,kslice-smem:8,kslice-smem:16,kslice-smem:1,kslice-smem:16;; *b8) L=kslice-smem:1,kslice-smem:16;; *) L=kslice-smem:16;; esac
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
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5
