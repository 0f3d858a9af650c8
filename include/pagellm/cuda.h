/* CUDA backend extras beyond the operator contract in attention.h: the batch K/V append
 * kernel and a tuning entry point for tests and benchmarks. All pointers are device memory;
 * work is enqueued on cuda_stream (a cudaStream_t, NULL for the default stream). Every
 * function returns PL_ERR_UNSUPPORTED when pagellm was built without CUDA. */
#ifndef PAGELLM_CUDA_H
#define PAGELLM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel families of pl_paged_attention_cuda. AUTO picks by shape: for query_len <= 8
 * DECODE_MMA (bf16, head_dim 128) or VECTOR (16-byte loads: bf16 head_dim 64, f32 head_dim
 * 128); for longer queries MMA (bf16, head_dim 128); GENERIC otherwise. */
typedef enum pl_cuda_attn_kernel {
    PL_CUDA_ATTN_AUTO = 0,
    PL_CUDA_ATTN_GENERIC, /* any dtype, head_dim <= 256, any query_len: scalar loads */
    PL_CUDA_ATTN_VECTOR,  /* split-context vector kernel, any query_len (made for <= 8) */
    PL_CUDA_ATTN_MMA,     /* bf16, head_dim 128: mma.sync paged FlashAttention */
    PL_CUDA_ATTN_DECODE_MMA /* bf16, head_dim 128: split decode on tensor cores, GQA rows packed */
} pl_cuda_attn_kernel;

/* A decode step's q/k RMSNorm + RoPE and K/V append, done by the decode attention itself
 * (pl_cuda_attn_options.rope). Row b (sequence b's one new token) of qkv holds its num_heads
 * raw q heads, then num_kv_heads k heads, then num_kv_heads v heads (args->dtype, head_dim
 * each). The kernel normalizes and rotates the q heads for its own use (args->query is not
 * read) and the k head as the backend's rope kernel does, and writes the rotated key and the
 * value into slot slots[b] of page page_ids[b] of args->key_pages / value_pages (a page id or
 * slot out of range writes nothing, as pl_kv_append_cuda); that position must be the last of
 * sequence b's context, which the block table maps to the same slot. */
typedef struct pl_cuda_attn_rope {
    const void *qkv;
    size_t row_stride;               /* elements between qkv rows */
    const float *q_norm, *k_norm;    /* [head_dim] RMSNorm weights */
    float eps;
    const float *cos_sin;            /* [batch, head_dim]: row b's cos at [0, head_dim / 2), then sin */
    const int32_t *page_ids, *slots; /* [batch] */
} pl_cuda_attn_rope;

typedef struct pl_cuda_attn_options {
    pl_cuda_attn_kernel kernel; /* overrides args->schedule when not AUTO */
    int num_splits;             /* context splits of the vector/generic kernels; 0 = heuristic */
    int mma_warps;              /* MMA query block: 4 or 8 warps of 16 rows (64 / 128 rows), or
                                   32 = 4 warps of 32 rows (128 rows); DECODE_MMA: 4 or 8 warps
                                   per CTA; 0 = heuristic */
    void *workspace;            /* device scratch for split partials (NULL: taken from the stream's
                                   pool with cudaMallocAsync and released after the call) */
    size_t workspace_bytes;     /* size of workspace; too small means the pool is used */
    int no_pdl;                 /* 1: launch without programmatic dependent launch (by default the
                                   kernels may launch while the previous kernel on the stream ends,
                                   and wait for it before reading anything) */
    int decode_copy;            /* DECODE_MMA K/V copies: 0 = TMA tensor copies where they apply
                                   (page_size % 16 == 0) and measured faster (all but 8-warp CTAs
                                   on ranges under 4096 keys), else cp.async; 1 = cp.async; 2 =
                                   TMA (PL_ERR_UNSUPPORTED where it does not apply) */
    int decode_early_kv;        /* 1: the caller promises that the block table, the context lengths
                                   and every key and value before the last query_len of each
                                   context were written before the kernel before this call on the
                                   stream started (not by that kernel); DECODE_MMA then reads them
                                   before waiting for that kernel (programmatic dependent launch),
                                   so old keys stream in while it ends; AUTO then prefers 4-warp
                                   CTAs, which fit beside that kernel's */
    int decode_units_per_cta;   /* DECODE_MMA: (split, row chunk, KV head, sequence) units per CTA,
                                   its K/V stream running on from one unit into the next; 0 =
                                   AUTO (as many as make one wave of two 4-warp CTAs per SM),
                                   1 = one unit per CTA; more than 1 needs 4-warp CTAs and at
                                   most 8 query rows per KV head (PL_ERR_UNSUPPORTED otherwise) */
    int decode_units_order;     /* DECODE_MMA with several units per CTA: 0 = AUTO (the sequences
                                   ranked by context, longest first, and CTA c takes the c-th unit
                                   of every pass of grid units, from the far end on odd passes: a
                                   long unit comes with a short one, so a batch of unequal contexts
                                   ends together; up to 256 sequences, else as 2), 1 = runs of
                                   consecutive units (a sequence's KV heads on one CTA), 2 = every
                                   grid-th unit in sequence order; 3 and 4 (benchmark knobs) = as 0
                                   with the odd passes forward, or unranked with them reversed; 5 =
                                   as 0 without decode_ranked */
    const int32_t *decode_ranked; /* optional, with decode_units_order 0 (device memory, written by
                                   pl_cuda_attn_rank from this call's block table and contexts): the
                                   sequences ranked on the host, so the kernel's CTAs start loading
                                   K/V without ranking them first (a round trip and a sync before
                                   the first loads: 1-5% of a Qwen3-4B batch-64 step on the H200,
                                   PERF.md, forty-sixth session); also past 256 sequences. Under
                                   decode_early_kv the caller's promise covers it too */
    int decode_lean;            /* DECODE_MMA with rope: 0 = AUTO (a CTA zeroes the query rows past
                                   a unit's once, not each unit; no integer divisions for rows past
                                   them or at query_len 1), 1 = each unit as before (a benchmark
                                   knob: the same results either way) */
    const int32_t *host_context_lens; /* optional: args->context_lens in host memory. DECODE_MMA with
                                   4-warp CTAs and num_splits 0 then splits by the contexts: the
                                   most splits of at most 256 keys whose units holding keys are no
                                   more than the SMs (else the shape heuristic); read by the host
                                   only, so the split count follows the contexts from call to call */
    const struct pl_cuda_attn_rope *rope; /* DECODE_MMA with query_len 1 and at most 16 query heads per
                                   KV head (else PL_ERR_UNSUPPORTED, nothing launched): the kernel
                                   also does the step's q/k RMSNorm + RoPE and K/V append, so no
                                   kernel runs for them before it (NULL: args->query holds the
                                   rotated queries and the pages the new keys) */
} pl_cuda_attn_options;

/* Bytes of split scratch pl_paged_attention_cuda_ex needs for these arguments and options
 * (0 when the chosen kernel does not split); depends on shapes only, not on device data. */
size_t pl_cuda_attn_workspace_bytes(const pl_paged_attention_args *args, const pl_cuda_attn_options *opt);

/* PL_OK when pl_paged_attention_cuda_ex accepts these arguments and options, else the status
 * and message it would fail with; launches nothing and reads no device memory. */
int pl_cuda_attn_check(const pl_paged_attention_args *args, const pl_cuda_attn_options *opt, char *err, size_t err_len);

/* The launch pl_paged_attention_cuda_ex would make for these arguments and options (NULL
 * outputs are skipped): its kernel, context splits, and for DECODE_MMA its CTAs and work units
 * per CTA (else 0 and 1). Like pl_cuda_attn_check, launches nothing and reads no device memory. */
int pl_cuda_attn_plan_info(const pl_paged_attention_args *args, const pl_cuda_attn_options *opt, pl_cuda_attn_kernel *kernel,
                           int *splits, int *ctas, int *units_per_cta, char *err, size_t err_len);

/* The ranking pl_cuda_attn_options.decode_ranked holds, written on the host into out
 * [batch * (max_pages + 2)]: the block table's rows by falling context (ties by sequence), then
 * their contexts, then each rank's sequence. Returns the number of int32 written, or 0 (nothing
 * written) when an argument is NULL, a count is not positive or memory runs out. */
size_t pl_cuda_attn_rank(int batch, int max_pages, const int32_t *block_table, const int32_t *context_lens, int32_t *out);

/* pl_paged_attention_cuda with explicit kernel choices (opt may be NULL). */
int pl_paged_attention_cuda_ex(const pl_paged_attention_args *args, const pl_cuda_attn_options *opt,
                               void *cuda_stream, char *err, size_t err_len);

/* Appends the token-major K/V rows of a whole batch step into their pages in one launch.
 * Row t (of num_tokens) of k/v (element (t, h, d) at k[t * token_stride + h * head_dim + d],
 * token_stride 0 meaning num_kv_heads * head_dim) goes to slot slots[t] of page page_ids[t] in
 * key_pages / value_pages ([num_pages, num_kv_heads, page_size, head_dim], dtype elements).
 * Rows with page_ids[t] < 0 are padding and skipped; rows whose page id or slot is out of
 * range are skipped too (the device cannot report them without a host synchronization). */
int pl_kv_append_cuda(pl_dtype dtype, int num_tokens, int num_kv_heads, int head_dim, int page_size,
                      int num_pages, const void *k, const void *v, size_t token_stride,
                      const int32_t *page_ids, const int32_t *slots, void *key_pages,
                      void *value_pages, void *cuda_stream, char *err, size_t err_len);

/* The GPU memory ceiling of the benchmarks: device-to-device copy bandwidth of the current
 * device in GB/s, counting bytes read + bytes written (2 x bytes per copy / time). Times
 * `reps` cudaMemcpyAsync copies of `bytes` on the default stream with CUDA events after two
 * warm-up copies and returns the median (bytes 0 = 2 GiB, reps 0 = 10, at most 64); both
 * buffers are freed before it returns. device_name (may be NULL) receives the GPU's name.
 * On failure (no device, out of memory, any CUDA error; built without CUDA) it returns a
 * value <= 0 and writes the message into err. */
double pl_cuda_measure_copy_gbps(size_t bytes, int reps, char *device_name, size_t name_len, char *err,
                                 size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
