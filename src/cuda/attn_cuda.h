/* Internal interface of the CUDA attention kernels (compiled by nvcc only). */
#ifndef PL_CUDA_ATTN_CUDA_H
#define PL_CUDA_ATTN_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "pagellm/attention.h"
#include "pagellm/cuda.h"

/* Resolved launch parameters shared by the kernels (passed by value). */
typedef struct pl_attn_params {
    const void *q, *k, *v;
    void *out;
    const int32_t *block_table, *context_lens;
    float *part_o;  /* [out_rows * splits, head_dim] partial outputs (splits > 1) */
    float *part_ml; /* [out_rows * splits, 2] partial (max, sum) in log2 units */
    int batch, num_heads, num_kv_heads, query_len, head_dim, group;
    int page_size, page_shift; /* page_shift >= 0 when page_size is a power of two */
    int max_pages, num_pages;
    int splits, chunk; /* keys per split: a multiple of 64 */
    int causal;
    float scale_log2;  /* scale * log2(e) */
    int pdl;           /* launch with programmatic dependent launch (the kernels wait first) */
    int wide_ctas;     /* DECODE_MMA: 8 warps per CTA (one CTA per SM) instead of 4 */
    int decode_copy;   /* DECODE_MMA: 0 TMA where it applies, 1 cp.async, 2 TMA or fail */
    int early_kv;      /* DECODE_MMA: old keys final before the kernel before us started (pl_cuda_attn_options) */
    int lean;          /* DECODE_MMA: pl_cuda_attn_options.decode_lean == 0 */
    int units;         /* DECODE_MMA: (split, 16-row chunk, KV head, sequence) work units */
    int units_per_cta; /* DECODE_MMA: units per CTA (>= 1) */
    int strided;       /* DECODE_MMA, units_per_cta > 1: CTA c takes units c, c + grid, ... instead of a run;
                          2: with the sequences ranked by falling context and every odd pass reversed
                          (3: ranked, passes forward; 4: reversed, unranked) */
    const int32_t *rank_bt, *rank_ctx, *rank_seq; /* strided 2: the host's ranking (pl_cuda_attn_rank) or NULL */
    /* DECODE_MMA, query_len 1 (pl_cuda_attn_options.rope): q is read raw from the qkv rows
     * and the new keys and values are normalized, rotated and appended here */
    int rope;
    pl_cuda_attn_rope rp;
} pl_attn_params;

#ifdef __cplusplus
extern "C" {
#endif
/* Vector / generic split-context kernels plus the merge kernel. vector != 0 asks for the
 * 16-byte vector variant (caller checked that head_dim suits it). */
int pl_cuda_attn_split_launch(const pl_attn_params *p, pl_dtype dtype, int vector, int rows_per_cta,
                              cudaStream_t stream, char *err, size_t err_len);
/* Combines split partials into out (no-op when splits == 1). */
int pl_cuda_attn_merge_launch(const pl_attn_params *p, pl_dtype dtype, cudaStream_t stream, char *err, size_t err_len);
/* bf16 head_dim 128 split decode on tensor cores (16 GQA rows per CTA), plus the merge. */
int pl_cuda_attn_decode_mma_launch(const pl_attn_params *p, cudaStream_t stream, char *err, size_t err_len);
/* bf16 head_dim 128 tensor-core kernel; shape 4 / 8 (warps of 16 rows) or 32 (4 warps of 32 rows). */
int pl_cuda_attn_mma_launch(const pl_attn_params *p, int shape, cudaStream_t stream, char *err, size_t err_len);
#ifdef __cplusplus
}
#endif
#endif
