#!/bin/bash
# Run 1: the committed code `6c529c3` (`s34a`; its review change to the 57-64-row kernel guards was
# never run on a GPU): test_cuda_backend, test_cuda_model, test_cuda_engine; batches 4 and 64 of
# Qwen3-4B, three rounds; then the thirty-third session's prepared ncu of exp_fullk_mc (`s33d`).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s34a && tar xJf .carry/s34a/bin.tar.xz -C /tmp/s34a
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
B=/tmp/s34a/bin O=/tmp/o1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for t in test_cuda_backend test_cuda_model test_cuda_engine; do
  timeout 150 $B/$t > $O/$t.txt 2>&1; echo "$t rc $?: $(tail -1 $O/$t.txt)"; grep -m8 FAIL $O/$t.txt
done
run() { # name batches args...
  local n=$1 bs=$2; shift 2
  timeout 60 $B/bench_model_cuda --only decode --steps 20 --batches $bs "$@" > $O/$n.txt 2>&1 || echo "$n rc $?"
  echo "$n: $(grep -E '^[0-9]+ ' $O/$n.txt | awk '{printf "b%s %s (%s)  ", $1, $3, $6}')"
}
for r in 0 1 2; do run base.$r 4,64; done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
i=0
for v in "mc NT48 CS1 11+6" "mc NT48 CS2 11+6" "CS2, rank 0"; do
  i=$((i + 1))
  EXP_REP=1 timeout 100 $NCU --set full --import-source no -k regex:fkmc_kernel --launch-skip 36 --launch-count 2 -o $O/fk$i \
    .carry/s33d/exp_fullk_mc "$v" > $O/ncu_run$i.txt 2>&1 || echo "ncu $v rc $?"
  $NCU --import $O/fk$i.ncu-rep --page details > $O/details$i.txt 2>&1
  echo "== $v"
  grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Hit|Issued Ipc|No Eligible|One or More Eligible)" $O/details$i.txt | head -12
done
tar czf ${OUT:-/tmp}/r1.tgz -C $O --exclude='*.ncu-rep' .
