#!/bin/bash
# Session 43, run 5: Nsight Compute SourceCounters (SASS with executed counts and warp stall samples, sampled every
# 32 cycles) over one batch-4 decode step's projections and small kernels: the tile GEMM (qkv with its K splits and
# fixup, gate/up), the k-sliced GEMM (o, down), the split merge and the add + RMSNorm, for the run-once code after
# their PDL waits (the next look of PERF.md, sessions 42-43). .carry/f43 (the committed GPU code).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/f43 && tar xJf .carry/f43/bin.tar.xz -C /tmp/f43; B=/tmp/f43/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/or5; mkdir -p $O
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; $NCU --version | tail -1
timeout 240 $NCU --clock-control none --kernel-name regex:'gemm_tile_kernel|gemm_kslice_kernel|merge_kernel|add_rmsnorm' \
  --launch-skip 400 --launch-count 6 --section SourceCounters --warp-sampling-interval 0 \
  -o $O/proj $B/bench_model_cuda --batches 4 --only decode --steps 20 > $O/ncu_src.log 2>&1; echo "ncu src rc $?"
tail -3 $O/ncu_src.log
$NCU -i $O/proj.ncu-rep --page source --csv --print-source sass > $O/proj_sass.csv 2> $O/proj_sass.err; echo "export rc $? $(wc -l < $O/proj_sass.csv) lines"
$NCU -i $O/proj.ncu-rep --page details --csv > $O/proj_details.csv 2>&1
python3 - $O/proj_sass.csv <<'PY'
import csv, sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
cur = None; tot = {}
for l in lines:
    if l.startswith('"Kernel Name"'):
        cur = l.split('","')[1][:70] + f" #{len(tot)}"; tot[cur] = [0, 0, 0]; hdr = None; continue
    if l.startswith('"Address"'):
        hdr = next(csv.reader([l])); iW = hdr.index("Warp Stall Sampling (All Samples)"); iI = hdr.index("Instructions Executed"); continue
    if cur and hdr:
        r = next(csv.reader([l]))
        if len(r) > iI:
            try: tot[cur][0] += int(r[iW]); tot[cur][1] += int(r[iI]); tot[cur][2] += 1
            except ValueError: pass
for k, (s, i, n) in tot.items(): print(f"{s:7d} stall samples {i:10d} instructions {n:5d} SASS lines  {k}")
PY
gzip -9 $O/*.csv
tar czf ${OUT:-/tmp}/r5.tgz --exclude="*.ncu-rep" -C /tmp or5
