#!/bin/bash
# session 17 run 11: where run 10's form A (illegal instruction) fails. compute-sanitizer on
# its test_cuda_backend (the first error), then the SASS of the 16-row cp.async bf16 tile
# kernel of form A and of base (cuobjdump / nvdisasm of the device machine's toolkit).
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/s17d && tar xJf .carry/s17d/bin.tar.xz -C /tmp/s17d; B=/tmp/s17d/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive
O=/tmp/o11; mkdir -p $O
ls /usr/local/cuda/bin | tr '\n' ' ' > $O/toolkit_bin.txt; echo >> $O/toolkit_bin.txt
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 3 $B/test_a > $O/sanitizer_a.log 2>&1; echo "sanitizer rc $?"
grep -m12 -iE "illegal|error|at 0x|pc|instruction" $O/sanitizer_a.log
F=_ZN39_GLOBAL__N__28a6abbb_7_gemv_cu_15855d8c16gemm_tile_kernelILi1E13__nv_bfloat16Lb0EEEvPKS1_S3_iiiPT0_PfPi14CUtensorMap_stS8_
for v in a base; do /usr/local/cuda/bin/cuobjdump -sass -fun $F $B/test_$v > $O/sass_$v.txt 2>&1; echo "sass $v: $(wc -l < $O/sass_$v.txt) lines, HGMMA $(grep -c HGMMA $O/sass_$v.txt), LDGSTS $(grep -c LDGSTS $O/sass_$v.txt)"; done
tar czf ${OUT:-/tmp}/r11.tgz -C $O .
