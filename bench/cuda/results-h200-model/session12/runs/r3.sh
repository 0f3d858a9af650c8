#!/bin/bash
# session 12 run 3: exp_tile_xreg with the largest shared-memory carveout; the step with the device preferring shared memory
cd "$(dirname "$0")/../.."
B=$PWD/.carry/s12/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 240 $B/exp_tile_xreg > $O/exp_tile_xreg.txt 2>&1; echo "exp rc $?"
timeout 200 $B/bench_model_cuda --only decode --batches 4,64 --prefer-shared-ab > $O/shared_ab.txt 2>&1; echo "bench rc $?"
grep -v "^check" $O/exp_tile_xreg.txt; grep -c "FAILED" $O/exp_tile_xreg.txt
grep -E "^L1/shared|^(4|64) " $O/shared_ab.txt
