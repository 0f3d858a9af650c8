/* Internal page-pool operations shared by the sequence caches: transactions that make a
 * multi-page append (and a multi-layer reserve) all-or-nothing. */
#ifndef PL_KV_PAGE_POOL_H
#define PL_KV_PAGE_POOL_H

#include "pagellm/kv.h"

/* Opens a transaction: until commit or rollback the pool remembers every allocation and keeps
 * the storage it had, so rollback restores ids, free stack, counters and storage exactly.
 * One transaction at a time per pool. */
int pl_page_pool_txn_begin(pl_page_pool *pool, char *err, size_t err_len);
void pl_page_pool_txn_commit(pl_page_pool *pool);
void pl_page_pool_txn_rollback(pl_page_pool *pool);

/* Chunk validation in the reference's order: pointers, dtype family, sizes, shape, dtype. */
int pl_page_pool_check_chunk(const pl_page_pool *pool, const pl_kv_chunk *chunk, char *err, size_t err_len);

/* K+V element size and count of one page (per K or V array). */
size_t pl_page_pool_elem_size(const pl_page_pool *pool);

/* Nonzero when the cache's pages already hold n more tokens (no pages to take, so a
 * reservation needs no pool transaction); 0 also for a bad cache or n, left to the checks. */
int pl_seq_cache_holds(const pl_seq_cache *cache, int n);

/* Reserve in two phases: begin allocates inside an open pool transaction (on failure it has
 * already rolled back), end commits or rolls back. Lets several layers reserve atomically. */
int pl_seq_cache_reserve_begin(pl_seq_cache *cache, int n, char *err, size_t err_len);
void pl_seq_cache_reserve_end(pl_seq_cache *cache, int commit);

#endif
