/* The device side of the engine's comparison KV modes (dense, paged-gather; see
 * src/engine/kv_modes.c) when the model runs on CUDA: device memory for the dense caches and
 * the padded decode batches, the copies that fill them, and one readable attention kernel.
 *
 * Everything is enqueued on the model backend's stream (given at create); nothing here waits
 * for the device except pl_kvc_destroy and the rare wrap of the metadata arena. Device
 * memory comes from a stream-ordered pool of this state (cudaMallocFromPoolAsync /
 * cudaFreeAsync), so the dense mode's allocation on every append costs no device-wide
 * synchronization. Pointers marked "device" are device memory, "host" host memory.
 * Built without CUDA (kv_modes_nocuda.c) every entry point returns PL_ERR_UNSUPPORTED. */
#ifndef PL_CUDA_KV_MODES_CUDA_H
#define PL_CUDA_KV_MODES_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_kvc pl_kvc;

/* State on the current device working on cuda_stream (a cudaStream_t). */
int pl_kvc_create(void *cuda_stream, pl_kvc **out, char *err, size_t err_len);
/* Waits for the stream, then frees the scratch, the arena and the pool (and with it any
 * allocation of the pool not yet freed). NULL is a no-op. */
void pl_kvc_destroy(pl_kvc *c);

/* *out = bytes of device memory, stream-ordered (PL_ERR_NOMEM / PL_ERR_CUDA: *out NULL). */
int pl_kvc_alloc(pl_kvc *c, size_t bytes, void **out, char *err, size_t err_len);
/* Stream-ordered free (work already enqueued may still read p). NULL is a no-op. */
void pl_kvc_free(pl_kvc *c, void *p);

/* *out = reusable device scratch of at least bytes (contents not kept when it grows; the old
 * buffer is freed stream-ordered, so work already enqueued may still read it). */
enum { PL_KVC_MASK = 0, PL_KVC_GATHER_K, PL_KVC_GATHER_V, PL_KVC_QUERY, PL_KVC_NUM_SCRATCH };
int pl_kvc_scratch(pl_kvc *c, int slot, size_t bytes, void **out, char *err, size_t err_len);

/* The dense concatenation: new_k / new_v (device, [H, old + n, D]) = the old cache (device,
 * [H, old, D]; unused when old == 0) with the n token-major rows of k / v (device, element
 * (t, h, d) at k[t * token_stride + h * D + d]) appended to every head. elem: bytes per element. */
int pl_kvc_dense_append(pl_kvc *c, size_t elem, int H, int D, int old, int n, const void *old_k, const void *old_v,
                        const void *k, const void *v, size_t token_stride, void *new_k, void *new_v, char *err,
                        size_t err_len);

/* Writes the n token-major rows of k / v (device, as above) into their page slots: row t to
 * slot slots[t] of page page_ids[t] (host arrays) of the pool storage key_pages / value_pages
 * (device, [capacity_pages, H, page_size, D]). The page table goes up through the arena. */
int pl_kvc_page_append(pl_kvc *c, pl_dtype dtype, int n, int H, int D, int page_size, int capacity_pages,
                       const void *k, const void *v, size_t token_stride, const int32_t *page_ids, const int32_t *slots,
                       void *key_pages, void *value_pages, char *err, size_t err_len);

/* One batch row of a staging copy: its ctx tokens come either from a dense cache (k, v:
 * device [H, ctx, D]) or, when k is NULL, from the pages pages[0 .. ceil(ctx / page_size))
 * (host ids) of the pool passed to pl_kvc_stage. They land at positions pad .. pad + ctx - 1. */
typedef struct pl_kvc_stage_row {
    const void *k, *v;
    const int32_t *pages;
    int ctx, pad;
} pl_kvc_stage_row;

/* Fills dst_k / dst_v (device, [rows, H, S, D]) from rows[0 .. nrows) (host array): tokens
 * at [pad, pad + ctx), zeros at [0, pad), positions past pad + ctx left as they are. mask
 * (device, [nrows, S] f32, may be NULL) gets the additive mask: -inf at [0, pad), else 0. */
int pl_kvc_stage(pl_kvc *c, size_t elem, int nrows, int H, int D, int S, const pl_kvc_stage_row *rows,
                 const void *key_pages, const void *value_pages, int page_size, void *dst_k, void *dst_v, float *mask,
                 char *err, size_t err_len);

/* mask (device, [n, S] f32): query j of a chunk of n ending the context of S tokens sees key
 * s iff s <= S - n + j (0), else -inf. */
int pl_kvc_causal_mask(pl_kvc *c, int n, int S, float *mask, char *err, size_t err_len);

/* Device 2D copy: rows of width bytes, strides in bytes. */
int pl_kvc_copy_rows(pl_kvc *c, void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t width,
                     int rows, char *err, size_t err_len);

/* The readable grouped attention in f32, one block per (batch row, query, query head):
 * scores[s] = q . k[s] * scale + mask[s] over the S keys of the row's KV head (keys whose
 * mask is -inf skipped), softmax, out = sum p[s] v[s]. Query (b, l) is the token row
 * b * L + l of q (device, act dtype, token_stride elements between tokens, heads D apart);
 * its output row b * L + l of out (device, [rows * L, Hq, D]). k, v: device [rows, Hkv, S,
 * D]; mask: device [rows, L, S] f32, 0 or -inf. dtype PL_BF16 or PL_F32; D <= 256. */
int pl_kvc_attention(pl_kvc *c, pl_dtype dtype, int rows, int L, int S, int Hq, int Hkv, int D, float scale,
                     const void *q, size_t token_stride, const void *k, const void *v, const float *mask, void *out,
                     char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
