/* A decode batch's whole MLP (gate/up GEMM, SwiGLU, down GEMM) as one kernel on sm_90a: one
 * CTA per SM streams its gate/up rows over all of K, makes SwiGLU in its epilogue, and its
 * weight ring runs on into its share of the down projection, whose K-split partials the
 * residual add + RMSNorm after it adds. nvcc only (C linkage). */
#ifndef PL_CUDA_MLP_CUDA_H
#define PL_CUDA_MLP_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PL_CUDA_MLP_ROWS 64 /* token rows of the kernel's MMAs: the most rows it takes */

/* How the kernel cuts one [hidden, inter] shape (pl_cuda_mlp_plan_for). */
typedef struct pl_cuda_mlp_plan {
    int hidden, inter;
    int ctas;   /* CTAs, at most one per SM: the MLP's all resident (a cooperative launch); a wide
                   projection's (pl_cuda_wide_plan_for) tiles x splits, in a plain launch */
    int cols;   /* intermediate columns of each CTA (gate/up: 2 x cols weight rows over all of hidden) */
    int tiles;  /* down: tiles of `tile` output rows ... */
    int tile;
    int splits; /* ... x K splits (tiles x splits <= ctas): the partial planes */
    int kt2;    /* 64-k stages of each split (the last may have fewer) */
    int form;   /* the compiled form (tile widths and ring depths; 0 for a wide projection) */
    size_t smem;
    int coop;   /* 1: a cooperative launch (every CTA resident, or cudaErrorCooperativeLaunchTooLarge and
                   no launch); 0, a benchmark hook: a plain one, which may start CTAs while the kernels
                   before leave SMs (a CTA waiting 2 s for the others then traps rather than hangs) */
    int pre;    /* the MLP's weight stages issued before its PDL wait: 0 the default (a third of the
                   ring), else at most the ring (a benchmark hook, pl_cuda_backend_mlp_pre). The plan
                   functions set 0; a wide projection issues its whole ring, a full-K one a third. */
} pl_cuda_mlp_plan;


/* 1 and *p when a compiled form takes the shape on a device of `sms` SMs, else 0 (then the
 * caller runs the three kernels). */
int pl_cuda_mlp_plan_for(int hidden, int inter, int sms, pl_cuda_mlp_plan *p);

/* 1 when the kernel's wgmma build runs on the current device (a launch and a wait: call it
 * outside stream capture, once), else 0. */
int pl_cuda_mlp_available(void);

/* The launch on `stream` (PDL when pdl != 0), for 1..PL_CUDA_MLP_ROWS rows:
 *   x [rows, hidden] bf16 (x_rows >= rows rows readable), w_gate_up [2 inter, hidden] (gate rows,
 *   then up rows), w_down [hidden, inter];
 *   h [rows, inter] bf16: SwiGLU(x w_gate^T, x w_up^T) with the unfused kernels' roundings (the
 *   bits of the GEMM + SwiGLU pair when the GEMM's f32 sums agree);
 *   parts: p->splits f32 planes [rows, hidden], plane r at parts + r * rows * hidden: split r's
 *   partial product of h w_down^T (they add, in split order, to the down projection);
 *   cnt: 64 ints, zero before; zero again once the kernel ends.
 * p->coop selects the launch (see the plan).
 * All pointers 16-byte aligned. Returns the cudaError_t of the launch. */
int pl_cuda_mlp_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w_gate_up, const void *w_down,
                     void *h, float *parts, int *cnt, int pdl, void *stream);

/* One projection y = x w^T (w [n, k] bf16, x [rows, k], 1..PL_CUDA_MLP_ROWS rows) as the fused
 * kernel's phase 2 alone: one CTA per SM (a plain launch: no CTA waits for another), its tiles x
 * K splits leaving f32 partial planes that the add + RMSNorm after it adds. The plan's hidden is
 * n, inter is k, cols is 0. 1 and *p when it takes the shape, else 0. */
int pl_cuda_wide_plan_for(int n, int k, int sms, pl_cuda_mlp_plan *p);
/* The launch: parts as for pl_cuda_mlp_bf16 (p->splits planes [rows, n]). Returns the
 * cudaError_t of the launch. */
int pl_cuda_wide_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w, float *parts, int pdl, void *stream);

/* One projection y = x w^T (w [n, k] bf16, x [rows, k], 1..PL_CUDA_MLP_ROWS rows, n even) as the
 * fused kernel's phase 1 alone: CTA c owns output columns [c cols, (c + 1) cols) over all of K (at
 * most one CTA per SM), so no K split and no sums: y [rows, n] bf16, each value rounded once from
 * its f32 sum. The plan's hidden is k, inter is n, cols the tile width; ring 0 the ring that fits
 * beside a decode-attention CTA (~113 KiB), 1 a deeper one (~153 KiB). 1 and *p when a compiled
 * form of the ring takes the shape, else 0. */
int pl_cuda_fullk_plan_for(int n, int k, int sms, int ring, pl_cuda_mlp_plan *p);
/* The launch (x, w and y 16-byte aligned). Returns the cudaError_t of the launch. */
int pl_cuda_fullk_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w, void *y, int pdl, void *stream);

/* y [rows, hidden] bf16 = the partial planes of pl_cuda_mlp_bf16 added in split order (with
 * add_rmsnorm_parts_kernel's roundings), for when no add + RMSNorm takes them. Returns the
 * cudaError_t of the launch. */
int pl_cuda_mlp_sum_bf16(const float *parts, int splits, int rows, int hidden, void *y, int pdl, void *stream);

#ifdef __cplusplus
}
#endif
#endif
