/* Skinny bf16 GEMM (decode-sized M) of the CUDA backend: y[m, n] = x[m, k] w[n, k]^T, f32
 * accumulation, y bf16 or f32, row-major, enqueued on the stream. */
#ifndef PL_CUDA_GEMV_CUDA_H
#define PL_CUDA_GEMV_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_CUDA_GEMV_MAX_M 8      /* rows of the MMA and FMA kernels */
#define PL_CUDA_GEMV_TILE_MAX_M 64 /* rows of the tile kernel */
#define PL_CUDA_GEMV_ALONE_SMEM (114 * 1024) /* a tile CTA alone on its SM (pl_cuda_gemv_ws.tile_alone); a decode-attention CTA still fits beside */

/* Kernels: tensor cores without staging (2-8 rows), CUDA-core FMAs (1-8 rows; the default
 * at 1), and the staged tensor-core tile kernel (2-64 rows; the default from 2 to 64). */
enum { PL_CUDA_GEMV_MMA = 1, PL_CUDA_GEMV_FMA = 2, PL_CUDA_GEMV_TILE = 3 };

/* Nonzero when some kernel takes the shape: 1 <= m <= PL_CUDA_GEMV_TILE_MAX_M, k a multiple
 * of 8, w and x 16-byte aligned (then every row is). */
int pl_cuda_gemv_supported(int m, int n, int k, const void *w, const void *x, const void *y);
/* Scratch of the tensor-core kernels when K is split over several blocks: bytes from
 * pl_cuda_gemv_ws_bytes, zeroed once when allocated (its counters return to 0
 * after every launch). sms: the device's multiprocessor count. */
typedef struct pl_cuda_gemv_ws {
    void *ptr;
    size_t bytes;
    int sms;
    int pdl; /* launch with programmatic dependent launch (overlap with the kernel before) */
    /* tile kernel's K split (0: defaults): CTAs per SM to aim for (2 up to 16 rows, 1 past), most splits (16), fewest
     * 64-k tiles per split (4) */
    int tile_ctas_per_sm, tile_max_splits, tile_min_ktiles;
    int tile_copy; /* tile kernel's stage copies: 0 default (TMA boxes), 1 cp.async, 2 TMA */
    int kslice;    /* split tile shapes of 6-8 rows (0, AUTO; 2-8 where x_rows >= 8) or 2-8 (2) take 16-row k-sliced tiles; 1 never */
    long *kslice_runs; /* NULL, or a counter the host adds one to at each k-sliced launch (a test hook's) */
    int x_rows;        /* rows of x that may be read, at least the call's M (0: M); the k-sliced tiles' 8-row x
                          boxes then read up to 8 of them, since out-of-range box rows were measured slow */
    int tile_trigger;  /* where the tile and k-sliced kernels let the next kernel launch (PDL): mode trigger & 15
                          (0 at entry; 1 after the PDL wait; 2 after the main loop; 3, 4, 5 a half, a quarter,
                          three quarters through it) for the kinds in trigger >> 4 (1: N < K, o and down; 2: K <= N
                          <= 4K, qkv; 4: N > 4K); 0 at entry everywhere (the backend's held qkv GEMM takes 3) */
    int tile_fixup;    /* how a tile GEMM's K-split CTAs count in before the last adds the partials: 0 AUTO (2 from
                          3 rows, else 1), 1 a fence by every thread, the atomic and a fence, 2 one acq_rel atomic
                          by thread 0 between two barriers */
    int tile_alone;    /* past `tile_alone` rows (0: never), a tile launch of one wave (tiles x splits <= sms)
                          asks for PL_CUDA_GEMV_ALONE_SMEM bytes, so no two of its CTAs share an SM */
    int tile_pre_all;  /* whose CTAs send all their ring's weight stages before the PDL wait instead of all but one:
                          the k-sliced GEMMs with K <= 2N (1: the o projection's), with K > 2N (2: down's), and the
                          tile GEMMs of trigger kinds 2 (4: qkv) and 4 (8: gate/up), a sum of these at every row
                          count; 0 AUTO (15 up to 16 rows, none past); 16 none */
} pl_cuda_gemv_ws;
int pl_cuda_gemv_splits(int n, int k, int sms);      /* MMA kernel */
int pl_cuda_gemv_tile_splits(int n, int k, int m, const pl_cuda_gemv_ws *ws); /* tile kernel, m rows */
int pl_cuda_gemv_kslice(int m, int n, int k, const pl_cuda_gemv_ws *ws); /* the tile variant takes k-sliced tiles (no K split) */
size_t pl_cuda_gemv_ws_bytes(int variant, int n, int k, const pl_cuda_gemv_ws *ws);

/* The launch; returns the cudaError_t of the launch (0: cudaSuccess). */
int pl_cuda_gemv_bf16(const void *w, const void *x, int m, int n, int k, void *y, int y_f32, int variant,
                      const pl_cuda_gemv_ws *ws, void *stream);

/* The tile kernel with its K splits left unsummed, for a consumer that adds them (the
 * residual add + RMSNorm after the o and down projections): split r's partial product as f32
 * [m][n] at pl_cuda_gemv_parts(ws) + r * m * n, r < pl_cuda_gemv_tile_splits(n, k, m, ws), for
 * 2 <= m <= 16 and at least two splits only (else cudaErrorInvalidValue). The partials sum, in
 * split order from 0, to the f32 values pl_cuda_gemv_bf16 rounds. Returns the cudaError_t. */
int pl_cuda_gemv_parts_bf16(const void *w, const void *x, int m, int n, int k, const pl_cuda_gemv_ws *ws, void *stream);
const float *pl_cuda_gemv_parts(const pl_cuda_gemv_ws *ws);

/* The greedy head on the tile kernel (2..PL_CUDA_GEMV_TILE_MAX_M rows): keys[r] = the largest
 * argmax key (value, then the lower n; NaN never) of row r of x w^T by atomicMax, the
 * product itself never stored; keys must hold m zeros before. Returns the cudaError_t. */
int pl_cuda_gemv_argmax_bf16(const void *w, const void *x, int m, int n, int k, unsigned long long *keys,
                             const pl_cuda_gemv_ws *ws, void *stream);

#ifdef __cplusplus
}
#endif
#endif
