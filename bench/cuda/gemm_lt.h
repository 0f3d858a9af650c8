/* Autotuned cuBLASLt GEMM for decode-sized batches: y[m, n] = x[m, k] w[n, k]^T, bf16 x and w,
 * f32 accumulation, y bf16 or f32, all row-major, enqueued on a stream. The same product (and
 * the same layout) as the backend's cublasGemmEx(OP_T, OP_N, n, m, k, w, k, x, k, y, n,
 * COMPUTE_32F, GEMM_DEFAULT) call.
 *
 * Why: at m ~ 64 rows the product is a stream over w, and cuBLAS's default algorithm reads w
 * at about half the copy bandwidth on an H200. cuBLASLt offers several algorithms per shape
 * (tiles, split-K with a workspace); the fastest one differs by shape, so each (m, n, k, y
 * dtype, operand alignment) is timed once on the caller's buffers and the winner is cached.
 *
 * Not thread-safe, like a cuBLAS handle: one pl_cuda_lt per thread, and calls on different
 * streams must not overlap in time (they share one workspace). Everything is bound to the
 * device that was current at pl_cuda_lt_create. */
#ifndef PL_CUDA_GEMM_LT_H
#define PL_CUDA_GEMM_LT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bound of the tuned-algorithm cache: at most this many keys (m, n, k, y dtype, alignments of
 * w, x and y); when full, the least recently used key is dropped and retuned if seen again. */
#define PL_CUDA_LT_MAX_KEYS 256
/* At most this many heuristic candidates are timed per key. */
#define PL_CUDA_LT_MAX_CANDIDATES 16
/* Workspace taken when pl_cuda_lt_create gets workspace_bytes == 0. */
#define PL_CUDA_LT_DEFAULT_WORKSPACE ((size_t)32 << 20)

typedef struct pl_cuda_lt pl_cuda_lt;

/* A cuBLASLt handle, a cuBLAS handle (for the cublasGemmEx default, the reference every
 * tuning compares against), a device workspace of workspace_bytes (0: 32 MiB; split-K
 * algorithms need it) and timing events, on the current device. Returns PL_OK, or
 * PL_ERR_INVALID / PL_ERR_NOMEM / PL_ERR_CUDA with a message in err (*out is then NULL). */
int pl_cuda_lt_create(pl_cuda_lt **out, size_t workspace_bytes, char *err, size_t err_len);
/* Frees everything (waits for the device, through cudaFree); NULL is a no-op. */
void pl_cuda_lt_destroy(pl_cuda_lt *lt);

/* y[m, n] = x[m, k] w[n, k]^T (row-major, bf16 w and x, y f32 when y_f32 != 0 else bf16),
 * alpha 1, beta 0, on stream (a cudaStream_t; NULL: the legacy default stream).
 *
 * - Key cached: one cublasLtMatmul (or, when the default won, one cublasGemmEx) on the
 *   stream; no allocation, no synchronization: safe inside a CUDA graph capture.
 * - Key absent and may_tune != 0 (and the stream is not capturing): asks cuBLASLt's
 *   heuristic for up to PL_CUDA_LT_MAX_CANDIDATES algorithms, times each (2 warm-up runs,
 *   median of 5, CUDA events on the stream, the L2 cache flushed before every run so w comes
 *   from memory as in a decode step) and the cublasGemmEx default likewise, caches the
 *   fastest, and leaves the winner's result in y. This synchronizes the stream, briefly
 *   allocates a buffer of twice the L2 size for the flush (timed without it if that fails)
 *   and overwrites y many times: y must not overlap w or x (checked: PL_ERR_INVALID).
 * - Key absent and may_tune == 0 (or the stream is capturing): runs the heuristic's first
 *   algorithm (the default when it offers none) without timing and caches nothing, so a
 *   later call with may_tune can still tune the key.
 *
 * w, x and y must be aligned to their element size; the alignment of each (up to 256 bytes)
 * is part of the key, since cuBLASLt algorithms may require more. m, n, k >= 1. Returns PL_OK,
 * PL_ERR_INVALID (bad argument), PL_ERR_UNSUPPORTED (no algorithm ran) or PL_ERR_CUDA with a
 * message naming the shape and the cuBLAS / CUDA status. */
int pl_cuda_lt_gemm(pl_cuda_lt *lt, const void *w, const void *x, int m, int n, int k, void *y, int y_f32,
                    int may_tune, void *stream, char *err, size_t err_len);

/* Nonzero when some key of this shape and y dtype (at any alignment) is tuned. */
int pl_cuda_lt_cached(const pl_cuda_lt *lt, int m, int n, int k, int y_f32);

/* What tuning chose for a shape (the most recently used key of that shape and y dtype). Times
 * are the tuning's medians in microseconds (cold L2 when cold_l2), -1 when not measured. */
typedef struct pl_cuda_lt_report {
    int use_default;        /* 1: the cublasGemmEx default was fastest and is what runs */
    int candidates;         /* algorithms the heuristic offered */
    int timed;              /* of those, the ones that ran (others returned an error status) */
    int cold_l2;            /* 1: every timed run followed an L2 flush */
    double chosen_us;       /* the cached choice */
    double default_us;      /* cublasGemmEx, CUBLAS_GEMM_DEFAULT (-1: it failed) */
    double best_lt_us;      /* the fastest cuBLASLt algorithm (-1: none ran) */
    double heuristic_us;    /* the heuristic's first algorithm, what an untuned call runs */
    size_t workspace_bytes; /* the best Lt algorithm's workspace */
    /* cublasLtMatmulAlgoConfigAttributes_t of the best Lt algorithm (-1: unknown) */
    int algo_id, tile_id, splitk_num, reduction_scheme, stages_id, swizzle, custom_option, cluster_shape_id;
    int align_w, align_x, align_y; /* bytes, as keyed */
} pl_cuda_lt_report;
/* 1 and *out filled when a key of this shape is cached; 0 (and *out zeroed) otherwise. */
int pl_cuda_lt_report_get(const pl_cuda_lt *lt, int m, int n, int k, int y_f32, pl_cuda_lt_report *out);

#ifdef __cplusplus
}
#endif
#endif
