/* Paged KV cache: one page pool per transformer layer, one sequence cache per request per
 * layer, and the batch metadata (block table + context lengths) attention reads.
 *
 * Page pool storage is [capacity, num_kv_heads, page_size, head_dim] for K and for V.
 * Page ids are local to a pool; freed ids go on a LIFO stack; the high-water mark
 * num_pages (P) is the page count attention sees. Two modes:
 *   growable - the reference semantics: capacity max(4, pages, 2 * capacity) on demand;
 *   capped   - a fixed budget allocated up front; exhaustion is PL_ERR_NO_PAGES.
 * Every mutating call is all-or-nothing: on failure nothing observable changes. */
#ifndef PAGELLM_KV_H
#define PAGELLM_KV_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/attention.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pl_pool_mode { PL_POOL_GROWABLE = 0, PL_POOL_CAPPED = 1 } pl_pool_mode;

/* Where page storage lives. NULL ops means host memory (64-byte aligned, zeroed).
 * A device backend supplies its own allocate / free / copy (copy is used on growth only). */
typedef struct pl_kv_storage_ops {
    void *(*alloc)(void *ctx, size_t bytes);           /* zeroed storage, or NULL */
    void (*free)(void *ctx, void *ptr);
    int (*copy)(void *ctx, void *dst, const void *src, size_t bytes); /* PL_OK or error */
    void *ctx;
} pl_kv_storage_ops;

typedef struct pl_page_pool_config {
    pl_dtype dtype;
    int num_kv_heads, page_size, head_dim;
    pl_pool_mode mode;
    int capped_pages;                  /* PL_POOL_CAPPED: the fixed page budget (> 0) */
    const pl_kv_storage_ops *storage;  /* NULL: host memory */
} pl_page_pool_config;

typedef struct pl_page_pool_stats {
    int num_pages;              /* high-water mark of ids handed out (P) */
    int live_pages;             /* ids owned by some sequence */
    int free_pages;             /* ids on the free stack */
    int capacity_pages;         /* first dimension of storage */
    int64_t reused_allocations; /* allocations served from the free stack */
    int64_t growths;            /* storage growth events */
    int64_t copied_pages;       /* pages copied on growth */
    int64_t copied_bytes;       /* K + V bytes copied on growth */
    size_t storage_bytes;       /* K + V bytes of full-capacity storage */
    size_t page_bytes;          /* K + V bytes of one page */
} pl_page_pool_stats;

typedef struct pl_page_pool pl_page_pool;

int pl_page_pool_create(const pl_page_pool_config *cfg, pl_page_pool **out, char *err, size_t err_len);
void pl_page_pool_destroy(pl_page_pool *pool);
/* Pops the free stack, else hands out id num_pages (growing storage in growable mode). */
int pl_page_pool_alloc(pl_page_pool *pool, int32_t *page_id, char *err, size_t err_len);
/* Errors: id outside [0, num_pages) ("out of range"), id not live ("is already free"). */
int pl_page_pool_free(pl_page_pool *pool, int32_t page_id, char *err, size_t err_len);
/* Only with no live page: drops storage (growable; capped keeps its budget), ids, counters. */
int pl_page_pool_reset(pl_page_pool *pool, char *err, size_t err_len);
void pl_page_pool_get_stats(const pl_page_pool *pool, pl_page_pool_stats *stats);
const pl_page_pool_config *pl_page_pool_get_config(const pl_page_pool *pool);
/* Storage base pointers (NULL before the first allocation in growable mode). They stay
 * valid until the next allocation that grows storage, or reset. */
void *pl_page_pool_keys(const pl_page_pool *pool);
void *pl_page_pool_values(const pl_page_pool *pool);
int pl_page_pool_is_live(const pl_page_pool *pool, int32_t page_id);
/* Test hook: the n-th page write from now (1 = the next) fails with PL_ERR_IO; 0 disarms. */
void pl_page_pool_inject_write_failure(pl_page_pool *pool, int nth_write);

/* A chunk of new K/V rows, token-major as the projections produce them:
 * element (t, h, d) of K is at k[t * token_stride + h * head_dim + d]. */
typedef struct pl_kv_chunk {
    pl_dtype dtype;
    int num_tokens, num_kv_heads, head_dim;
    const void *k, *v;
    size_t token_stride; /* elements between consecutive tokens; 0 means num_kv_heads * head_dim */
} pl_kv_chunk;

/* Writes tokens [first, first + count) of the chunk into slots [slot, slot + count) of a live
 * page. Validation order as the reference: chunk checks, count > page_size, page free, id out
 * of range, slot range. Host storage only. */
int pl_page_pool_write(pl_page_pool *pool, int32_t page_id, int slot, const pl_kv_chunk *chunk,
                       int first, int count, char *err, size_t err_len);

/* One request's cache in one layer. Fields are read-only to callers.
 * page_ids: logical page order; page_lens: valid tokens per page (0 for a reserved page not
 * yet written); offset: tokens written (the context length). */
typedef struct pl_seq_cache {
    pl_page_pool *pool;
    int32_t *page_ids;
    int32_t *page_lens;
    int num_pages;
    int cap_pages; /* allocated length of the two arrays */
    int offset;
    int txn_pages; /* internal: num_pages when an open reservation began */
} pl_seq_cache;

void pl_seq_cache_init(pl_seq_cache *cache, pl_page_pool *pool);
/* Releases every page and frees the metadata arrays. */
void pl_seq_cache_destroy(pl_seq_cache *cache);
/* Makes sure pages exist for offset + n tokens (allocating only past the tail page).
 * PL_ERR_NO_PAGES from a capped pool leaves the cache and pool unchanged. */
int pl_seq_cache_reserve(pl_seq_cache *cache, int n, char *err, size_t err_len);
/* Appends the chunk: reserve, write, advance offset. All-or-nothing: on any failure the
 * pages this call took go back to the pool and the metadata is restored. */
int pl_seq_cache_append(pl_seq_cache *cache, const pl_kv_chunk *chunk, char *err, size_t err_len);
/* Marks n already-reserved tokens as written (data written elsewhere, e.g. by a device
 * kernel): offset += n. Fails if fewer than n slots are reserved. */
int pl_seq_cache_commit(pl_seq_cache *cache, int n, char *err, size_t err_len);
/* Returns every page to the pool exactly once; offset becomes 0. */
int pl_seq_cache_release(pl_seq_cache *cache, char *err, size_t err_len);
/* Drops the newest n tokens (0 <= n <= offset), freeing pages no longer needed. */
int pl_seq_cache_rewind(pl_seq_cache *cache, int n, char *err, size_t err_len);
/* Copies the cache into dense head-major [num_kv_heads, offset, head_dim] K and V (the
 * compatibility path). Requires offset > 0. */
int pl_seq_cache_gather(const pl_seq_cache *cache, void *k_out, void *v_out, char *err, size_t err_len);
/* Unused slots in the last page (0 when the cache has no pages). */
int pl_seq_cache_tail_slots(const pl_seq_cache *cache);
/* Checks the invariants (pages full but the last written one, sum(lens) == offset, ids live
 * in the pool, no id twice); PL_ERR_INTERNAL with a message if one breaks. */
int pl_seq_cache_check(const pl_seq_cache *cache, char *err, size_t err_len);

/* Batch metadata for attention: block_table [batch, max_pages] int32 padded with -1,
 * context_lens [batch]. rows[b] == NULL marks an empty slot (ctx 0, row all -1).
 * pending (may be NULL) adds tokens reserved but not yet committed to row b's context, so
 * one build before a forward pass serves every layer. max_pages must cover every row;
 * pl_kv_max_pages gives the smallest such value. Rows must share one pool. */
int pl_kv_max_pages(const pl_seq_cache *const *rows, int batch);
int pl_kv_build_batch(const pl_seq_cache *const *rows, int batch, const int *pending, int max_pages,
                      int32_t *block_table, int32_t *context_lens, char *err, size_t err_len);


/* All layers of one model: one pool per layer, configured alike. */
typedef struct pl_kv_pools {
    int num_layers;
    pl_page_pool **layers;
} pl_kv_pools;

int pl_kv_pools_create(const pl_page_pool_config *cfg, int num_layers, pl_kv_pools *out, char *err, size_t err_len);
void pl_kv_pools_destroy(pl_kv_pools *pools);
int pl_kv_pools_reset(pl_kv_pools *pools, char *err, size_t err_len);
/* Counters summed over layers (num_pages and capacity summed too). */
void pl_kv_pools_get_stats(const pl_kv_pools *pools, pl_page_pool_stats *sum);

/* One request across all layers. Every operation is applied to all layers in lockstep, so
 * page ids agree across layers and one block table (built from layer 0) serves the whole
 * forward pass. */
typedef struct pl_kv_seq {
    int num_layers;
    pl_seq_cache *layers;
} pl_kv_seq;

int pl_kv_seq_init(pl_kv_seq *seq, const pl_kv_pools *pools, char *err, size_t err_len);
void pl_kv_seq_destroy(pl_kv_seq *seq);
/* All-or-nothing across layers: PL_ERR_NO_PAGES leaves every layer unchanged. */
int pl_kv_seq_reserve(pl_kv_seq *seq, int n, char *err, size_t err_len);
int pl_kv_seq_release(pl_kv_seq *seq, char *err, size_t err_len);
int pl_kv_seq_rewind(pl_kv_seq *seq, int n, char *err, size_t err_len);
static inline int pl_kv_seq_offset(const pl_kv_seq *seq) { return seq->num_layers > 0 ? seq->layers[0].offset : 0; }
static inline int pl_kv_seq_num_pages(const pl_kv_seq *seq) { return seq->num_layers > 0 ? seq->layers[0].num_pages : 0; }

#ifdef __cplusplus
}
#endif
#endif
