#!/bin/bash
# session 13 run 9: default (at most 8 splits) against 16 (the old default), batches 2/3/4/6, 40 steps per median, twice
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s13/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi -L > $O/gpu.txt
for r in 1 2; do
  timeout 150 $B/bench_model_cuda --only decode --batches 2,3,4,6 --steps 40 --tile-max-ab 16 > $O/max_ab_16.$r.txt 2>&1; echo "run $r rc $?"
done
python3 - "$O" <<'PY'
import sys, re, glob
for f in sorted(glob.glob(sys.argv[1] + "/max_ab_*.txt")):
    d = {}
    for l in open(f):
        m = re.search(r"tile GEMM split: batch (\d+), round \d, (.*): step ([\d.]+) ms", l)
        if m: d.setdefault(int(m[1]), {}).setdefault(m[2], []).append(float(m[3]))
    print(f.split("/")[-1], " | ".join("B%d %s" % (b, " vs ".join("%s %s" % (k, "/".join("%.3f" % x for x in v)) for k, v in d[b].items())) for b in sorted(d)))
PY
cat $O/gpu.txt
