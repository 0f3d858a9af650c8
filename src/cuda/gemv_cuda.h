/* Skinny bf16 GEMM (decode-sized M) of the CUDA backend: y[m, n] = x[m, k] w[n, k]^T, f32
 * accumulation, y bf16 or f32, row-major, enqueued on the stream. */
#ifndef PL_CUDA_GEMV_CUDA_H
#define PL_CUDA_GEMV_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_CUDA_GEMV_MAX_M 8

/* Kernels: tensor cores (mma.sync; the default from 2 rows) or CUDA-core FMAs (1 row). */
enum { PL_CUDA_GEMV_MMA = 1, PL_CUDA_GEMV_FMA = 2 };

/* Nonzero when the kernels take the shape: 1 <= m <= PL_CUDA_GEMV_MAX_M, k a multiple of 8,
 * w and x 16-byte aligned (then every row is). */
int pl_cuda_gemv_supported(int m, int n, int k, const void *w, const void *x, const void *y);
/* Scratch of the tensor-core kernel when few 16-row tiles split K over several blocks:
 * bytes from pl_cuda_gemv_ws_bytes, zeroed once when allocated (its counters return to 0
 * after every launch). sms: the device's multiprocessor count. */
typedef struct pl_cuda_gemv_ws {
    void *ptr;
    size_t bytes;
    int sms;
    int pdl; /* launch with programmatic dependent launch (overlap with the kernel before) */
} pl_cuda_gemv_ws;
int pl_cuda_gemv_splits(int n, int k, int sms);
size_t pl_cuda_gemv_ws_bytes(int n, int k, int sms);

/* The launch; returns the cudaError_t of the launch (0: cudaSuccess). */
int pl_cuda_gemv_bf16(const void *w, const void *x, int m, int n, int k, void *y, int y_f32, int variant,
                      const pl_cuda_gemv_ws *ws, void *stream);

#ifdef __cplusplus
}
#endif
#endif
