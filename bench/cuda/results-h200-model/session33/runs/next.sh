#!/bin/bash
# Prepared, not run (no device time left): ncu (full set) of exp_fullk_mc.cu's kernel at Qwen3-4B's
# qkv shape, without clusters (CS1), with each CTA multicasting its x slice (CS2), and with rank 0
# multicasting every slice: where the multicast form's ~0.9 us a stage goes (runs 7-9). Carry
# `.carry/s33d` (the experiment as committed, built on the dev VM).
cd "$(dirname "$0")/../../../../.."
O=/tmp/on; mkdir -p $O
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
i=0
for v in "mc NT48 CS1 11+6" "mc NT48 CS2 11+6" "CS2, rank 0"; do
  i=$((i + 1))
  EXP_REP=1 timeout 150 $NCU --set full --import-source no -k regex:fkmc_kernel --launch-skip 36 --launch-count 2 -o $O/fk$i \
    .carry/s33d/exp_fullk_mc "$v" > $O/run$i.txt 2>&1 || echo "ncu $v rc $?"
  $NCU --import $O/fk$i.ncu-rep --page details > $O/details$i.txt 2>&1
  echo "== $v"
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Issued Ipc|No Eligible|Warp Cycles Per Issued|Stall|Cluster" $O/details$i.txt | head -30
done
tar czf ${OUT:-/tmp}/next.tgz -C $O --exclude='*.ncu-rep' .
