#!/bin/bash
# session 22 run 2: the split fixup of the tile GEMM up to 16 rows (the last CTA of a tile adds
# the partials): base, its partials loaded 16 at a time (one round trip for <= 16 splits), and
# a diagnostic with no fixup at all (results wrong, timing real); three rounds, order rotating.
cd "$(dirname "$0")/../../../../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o2; mkdir -p $O
for n in s22b s22c s22d; do mkdir -p /tmp/$n && tar xJf .carry/$n/bin.tar.xz -C /tmp/$n; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 0 1 2; do
  if [ $r = 1 ]; then L="s22d s22c s22b"; elif [ $r = 2 ]; then L="s22c s22b s22d"; else L="s22b s22c s22d"; fi
  for n in $L; do timeout 120 /tmp/$n/bench_model_cuda --only decode --batches 1,4,8,16 > $O/steps_${n}_$r.txt 2>&1 || echo "$n $r rc $?"; done
done
cat $O/gpu.txt
for n in s22b s22c s22d; do echo "== $n"; grep -hE "^[0-9]+ +512 " $O/steps_${n}_*.txt | awk '{print $1, $3, $6}' | sort -n -k1 | awk '{a[$1]=a[$1]" "$2" ("$3")"} END {for (k in a) print k": "a[k]}' | sort -n; done
tar czf ${OUT:-/tmp}/r2.tgz -C $O .
