#!/bin/bash
# Session 43, run 2: the full check of the committed code with the lean decode attention (.carry/f43 = e086126 +
# the steps CSV's after_prefill column): test_cuda_attention, then scripts/gpu_model_check.sh --serving (the CUDA
# tests, memcheck, the model benchmark, the seed trace in all three KV modes against transformers, with each paged
# process's decode steps kept, the heavy trace, prefill chunks against cuBLAS).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f43 && tar xJf .carry/f43/bin.tar.xz -C /tmp/f43; B=/tmp/f43/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
L=/tmp/final; mkdir -p $L/model
timeout 90 $B/test_cuda_attention > $L/model/test_cuda_attention.log 2>&1; echo "test_cuda_attention rc $?: $(tail -1 $L/model/test_cuda_attention.log)"
OUT=$L/model timeout 450 bash scripts/gpu_model_check.sh --bin $B --serving > $L/model/console.txt 2>&1; echo "model check rc $?"
tail -16 $L/model/console.txt
grep -E "^(1|4|64) |LM head alone|^batch [0-9]+: (step|the last)" $L/model/bench_model_cuda.txt
python3 - $L/model <<'PY'
import csv, gzip, glob, statistics as st, sys
for f in sorted(glob.glob(sys.argv[1] + '/bench_serving_cuda_paged.steps.paged.*.csv.gz')):
    rows = [r for r in csv.DictReader(gzip.open(f, 'rt')) if int(r['rows']) == 4]
    for a in (0, 1):
        sel = [float(r['ratio']) for r in rows if int(r['after_prefill']) == a]
        print(f"{f.split('/')[-1]}: batch-4 steps after_prefill={a}: n {len(sel)} step/roofline median {st.median(sel):.4f}")
PY
tar czf $O/r2.tgz -C $L model
