#!/bin/bash
# session 22 run 12: with the partials in the norm, the tile GEMM's stages by cp.async (the
# default up to 8 rows) or TMA boxes (--tile-copy-ab, three rounds) at batches 2, 4 and 8: does a
# bulk-copy flood of the next GEMM's first stages delay the norm's loads less?
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s22l && tar xJf .carry/s22l/bin.tar.xz -C /tmp/s22l; B=/tmp/s22l/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o12; mkdir -p $O
timeout 150 $B/bench_model_cuda --only decode --batches 2,4,8 --tile-copy-ab > $O/steps_copy.txt 2>&1 || echo "copy rc $?"
grep -h "tile copy: .*default kernels" $O/steps_copy.txt
tar czf ${OUT:-/tmp}/r12.tgz -C $O .
