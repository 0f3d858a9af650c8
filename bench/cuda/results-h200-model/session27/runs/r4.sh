#!/bin/bash
# session 27 run 4: ncu (full set, source counters) of the decode attention at 64x512 and 64x8192
# (pagellm bench-attention, ed5b096's build): where its warps stall at the step's batch-64 shape,
# against the long shape that streams at ~4.4 TB/s.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s26a && tar xJf .carry/s26a/bin.tar.xz -C /tmp/s26a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD
O=/tmp/o4; mkdir -p $O
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for s in 64x512 64x8192; do
  timeout 150 $NCU --set full --import-source no -k regex:decode_mma_kernel --launch-count 2 -o $O/att_$s \
    /tmp/s26a/bin/pagellm bench-attention --device cuda --only decode --decode-shapes $s --iters 2 --warmup 0 --no-check > $O/run_$s.txt 2>&1 || echo "ncu $s rc $?"
  $NCU --import $O/att_$s.ncu-rep --page details > $O/details_$s.txt 2>&1
  $NCU --import $O/att_$s.ncu-rep --page source --csv --print-source sass > $O/sass_$s.csv 2>&1
done
for s in 64x512 64x8192; do
  echo "== $s"; grep -E "Grid Size|Block Size|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Warp Cycles Per Issued|Stall" $O/details_$s.txt | head -40
done
gzip -f $O/sass_*.csv
tar czf ${OUT:-/tmp}/r4.tgz -C $O --exclude='*.ncu-rep' .
