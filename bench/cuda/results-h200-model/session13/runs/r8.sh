#!/bin/bash
# session 13 run 8: the tile GEMM at most 8 splits by default; --tile-max-ab 16 (the old default), 6 and 11; test_cuda_backend
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 120 $B/test_cuda_backend > $O/test_backend.log 2>&1; echo "backend rc $? $(tail -n 1 $O/test_backend.log)"
grep -m5 -i "fail" $O/test_backend.log
for n in 16 6 11; do
  timeout 150 $B/bench_model_cuda --only decode --batches 2,3,4,6,8,12,16 --tile-max-ab $n > $O/max_ab_$n.txt 2>&1; echo "max $n rc $?"
done
python3 - "$O" <<'PY'
import sys, re, glob, statistics as st
for f in sorted(glob.glob(sys.argv[1] + "/max_ab_*.txt")):
    d = {}
    for l in open(f):
        m = re.match(r"tile GEMM split: batch (\d+), round \d, (.*): step ([\d.]+) ms", l)
        if m: d.setdefault(int(m[1]), {}).setdefault(m[2], []).append(float(m[3]))
    print(f.split("/")[-1], " | ".join("B%d %s" % (b, " vs ".join("%s %s" % (k, "/".join("%.3f" % x for x in v)) for k, v in d[b].items())) for b in sorted(d)))
PY
