/* The paged-attention operator contract: exact attention that reads K/V straight from a
 * page pool through a block table. One operator, schedules chosen inside by shape. */
#ifndef PAGELLM_ATTENTION_H
#define PAGELLM_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pl_dtype { PL_F32 = 0, PL_BF16 = 1 } pl_dtype;       /* bf16 stored as uint16_t */

typedef enum pl_attn_schedule {
    PL_ATTN_AUTO = 0,   /* dispatch by shape: decode for query_len <= 8, flash otherwise */
    PL_ATTN_REFERENCE,  /* readable gather + float64 softmax: the oracle, any valid shape */
    PL_ATTN_SCALAR,     /* generic float32 control, any valid shape */
    PL_ATTN_DECODE,     /* vector / split-context schedule for short queries */
    PL_ATTN_FLASH       /* tiled online-softmax schedule for long queries */
} pl_attn_schedule;

typedef struct pl_paged_attention_args {
    pl_dtype dtype;              /* query, key_pages, value_pages and out share it */
    int batch, num_heads, num_kv_heads, query_len, head_dim;
    int num_pages, page_size, max_pages;
    float scale;                 /* <= 0 means 1/sqrt(head_dim) */
    int causal;                  /* nonzero: key s is visible to query row l iff s <= l + ctx - query_len */
    const void *query;           /* [batch, query_len, num_heads, head_dim], token-major */
    const void *key_pages;       /* [num_pages, num_kv_heads, page_size, head_dim] */
    const void *value_pages;     /* same shape as key_pages */
    const int32_t *block_table;  /* [batch, max_pages]: live page ids, then -1 */
    const int32_t *context_lens; /* [batch]: 0 marks an inactive row, whose output is all zeros */
    void *out;                   /* [batch, query_len, num_heads, head_dim] */
    pl_attn_schedule schedule;
} pl_paged_attention_args;

/* PL_OK, or a negative pl_status with a message naming the bad argument written to err. */
int pl_paged_attention(const pl_paged_attention_args *args, char *err, size_t err_len);

/* Validation alone (shapes and block-table contents, host memory): what pl_paged_attention
 * checks before any work. Useful to check metadata once per step for many layers. */
int pl_paged_attention_validate(const pl_paged_attention_args *args, char *err, size_t err_len);

/* The same operator on an NVIDIA GPU: every array in device memory, work enqueued on
 * cuda_stream (a cudaStream_t, NULL for the default stream) with no host synchronization.
 * Shape checks always run; block-table contents are checked only by
 * pl_paged_attention_cuda_validate (a device-to-host copy). PL_ERR_UNSUPPORTED when the
 * library was built without CUDA. */
int pl_paged_attention_cuda(const pl_paged_attention_args *args, void *cuda_stream, char *err, size_t err_len);
int pl_paged_attention_cuda_validate(const pl_paged_attention_args *args, void *cuda_stream, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
