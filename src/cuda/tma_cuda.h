/* Host side of the TMA tensor copies (sm_90 cp.async.bulk.tensor): 2D bf16 tensor maps in the
 * 128-byte swizzle, for the kernels' __grid_constant__ CUtensorMap parameters. nvcc only. */
#ifndef PL_CUDA_TMA_CUDA_H
#define PL_CUDA_TMA_CUDA_H

#include <cuda.h>
#include <stdint.h>

/* A row-major [outer, inner] bf16 array at base (16-byte aligned, rows row_bytes apart, a
 * multiple of 16) read in boxes of [box_outer, box_inner] (box_inner * 2 = 128 bytes for the
 * swizzle); elements past the array read as zero. 1 on success, 0 when the driver has no
 * encoder or refuses the shape (callers fall back to cp.async). The encoder is reached
 * through the runtime (cudaGetDriverEntryPointByVersion), so nothing links -lcuda. */
int pl_cuda_tmap_2d_bf16(CUtensorMap *m, const void *base, uint64_t inner, uint64_t outer, uint64_t row_bytes,
                         uint32_t box_inner, uint32_t box_outer);

#endif
