#!/bin/bash
# Session 42, run 5: instructions executed per warp, kernel by kernel, in batch-4 decode steps (Nsight Compute over a
# window of graph-replayed launches; ncu serializes kernels, so its times are not the step's), and the decode
# attention's SASS with each instruction's executed count (SourceCounters), to find the run-once code on its critical
# path. .carry/v3 (the step arena build).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/v3 && tar xJf .carry/v3/bin.tar.xz -C /tmp/v3; B=/tmp/v3/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; $NCU --version | tail -1
timeout 200 $NCU --clock-control none --launch-skip 1500 --launch-count 300 --csv --page raw \
  --metrics smsp__inst_executed.sum,smsp__warps_launched.sum,gpu__time_duration.sum,launch__grid_size,launch__block_size \
  $B/bench_model_cuda --batches 4 --only decode --steps 20 > $O/ncu_inst.csv 2> $O/ncu_inst.err; echo "ncu inst rc $?"
timeout 200 $NCU --clock-control none --kernel-name regex:decode_mma_kernel --launch-skip 60 --launch-count 1 --section SourceCounters \
  -o $O/attn $B/bench_model_cuda --batches 4 --only decode --steps 20 > $O/ncu_src.log 2>&1; echo "ncu src rc $?"
$NCU -i $O/attn.ncu-rep --page source --csv --print-source sass > $O/attn_sass.csv 2> $O/attn_sass.err; echo "export rc $? $(wc -l < $O/attn_sass.csv) lines"
$NCU -i $O/attn.ncu-rep --page details --csv > $O/attn_details.csv 2>&1
python3 - $O/ncu_inst.csv <<'PY'
import csv, sys, collections
lines = open(sys.argv[1], errors="replace").read().splitlines()
s = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
rows = list(csv.reader(lines[s:])); h = rows[0]; c = {n: i for i, n in enumerate(h)}
agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
for r in rows[2:]:
    if len(r) < len(h): continue
    n = r[c["Kernel Name"]].replace("(anonymous namespace)::", "")[:60]
    try: inst = float(r[c["smsp__inst_executed.sum"]].replace(",", "")); w = float(r[c["smsp__warps_launched.sum"]].replace(",", "")); t = float(r[c["gpu__time_duration.sum"]].replace(",", ""))
    except ValueError: continue
    a = agg[n]; a[0] += 1; a[1] += inst; a[2] += w; a[3] += t
for n, (k, inst, w, t) in sorted(agg.items(), key=lambda x: -x[1][3]):
    print(f"{k:4d} launches  inst/warp {inst / max(w, 1):8.0f}  warps/launch {w / k:8.0f}  ns/launch {t / k:9.0f}  {n}")
PY
tar czf ${OUT:-/tmp}/r5.tgz -C /tmp or5 --exclude='*.ncu-rep'
