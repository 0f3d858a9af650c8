/* Skinny bf16 GEMM (decode-sized M) of the CUDA backend: y[m, n] = x[m, k] w[n, k]^T, f32
 * accumulation, y bf16 or f32, row-major, enqueued on the stream. */
#ifndef PL_CUDA_GEMV_CUDA_H
#define PL_CUDA_GEMV_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

#define PL_CUDA_GEMV_MAX_M 8

/* Kernels: tensor cores (mma.sync; the default from 2 rows) or CUDA-core FMAs (1 row). */
enum { PL_CUDA_GEMV_MMA = 1, PL_CUDA_GEMV_FMA = 2 };

/* Nonzero when the kernels take the shape: 1 <= m <= PL_CUDA_GEMV_MAX_M, k a multiple of 8,
 * w and x 16-byte aligned (then every row is). */
int pl_cuda_gemv_supported(int m, int n, int k, const void *w, const void *x, const void *y);
/* The launch; returns the cudaError_t of the launch (0: cudaSuccess). */
int pl_cuda_gemv_bf16(const void *w, const void *x, int m, int n, int k, void *y, int y_f32, int variant, void *stream);

#ifdef __cplusplus
}
#endif
#endif
