#!/bin/bash
# session 9 run 6: TMA boxes in the tile GEMM: backend test, then cp.async vs TMA step A/B
cd "$(dirname "$0")/../.."
B=$PWD/.carry/cm/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 150 $B/test_cuda_backend_tma > $O/run6_test_cuda_backend.txt 2>&1; echo "test_cuda_backend(tma) rc $?"; grep -E "FAIL|checks" $O/run6_test_cuda_backend.txt | head -8
timeout 200 stdbuf -oL $B/bench_model_cuda_tma --only decode --batches 4,16,32,64 --tile-copy-ab > $O/run6_tile_copy_ab.txt 2>&1; echo "ab rc $?"
grep -E "^(4|16|32|64) " $O/run6_tile_copy_ab.txt | cut -c1-90
grep "tile copy" $O/run6_tile_copy_ab.txt | sed 's/tile copy: //'
