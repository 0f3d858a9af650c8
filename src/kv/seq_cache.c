/* Sequence cache: one request's pages in one layer's pool. Appends fill the tail page first
 * and allocate only on overflow; every mutation is all-or-nothing. */
#include <stdlib.h>
#include <string.h>

#include "kv/page_pool.h"

void pl_seq_cache_init(pl_seq_cache *c, pl_page_pool *pool) {
    memset(c, 0, sizeof *c);
    c->pool = pool;
}

void pl_seq_cache_destroy(pl_seq_cache *c) {
    if (!c) return;
    if (c->pool) pl_seq_cache_release(c, NULL, 0);
    free(c->page_ids);
    free(c->page_lens);
    memset(c, 0, sizeof *c);
}

/* Most tokens one sequence cache holds: keeps offset + n and page counts inside int. */
#define PL_SEQ_MAX_TOKENS (1LL << 30)

static int page_size_of(const pl_seq_cache *c) { return pl_page_pool_get_config(c->pool)->page_size; }

/* page_lens follow from offset: every page full up to offset, reserved pages empty. */
static void refresh_lens(pl_seq_cache *c, int from_page) {
    int ps = page_size_of(c);
    for (int i = from_page; i < c->num_pages; i++) {
        int len = c->offset - i * ps;
        c->page_lens[i] = len < 0 ? 0 : (len > ps ? ps : len);
    }
}

static int ensure_meta(pl_seq_cache *c, int pages, char *err, size_t err_len) {
    if (pages <= c->cap_pages) return PL_OK;
    int cap = c->cap_pages ? c->cap_pages : 8;
    while (cap < pages) cap *= 2;
    int32_t *ids = realloc(c->page_ids, sizeof(int32_t) * (size_t)cap);
    if (!ids) return pl_fail(err, err_len, PL_ERR_NOMEM, "sequence cache: out of memory for %d pages", pages);
    c->page_ids = ids;
    int32_t *lens = realloc(c->page_lens, sizeof(int32_t) * (size_t)cap);
    if (!lens) return pl_fail(err, err_len, PL_ERR_NOMEM, "sequence cache: out of memory for %d pages", pages);
    c->page_lens = lens;
    c->cap_pages = cap;
    return PL_OK;
}

static int check_cache(const pl_seq_cache *c, const char *fn, char *err, size_t err_len) {
    if (!c) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: cache is NULL", fn);
    if (!c->pool) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: cache has no pool (not initialized)", fn);
    return PL_OK;
}

/* Allocates pages up to `need` inside the pool's open transaction. */
static int take_pages(pl_seq_cache *c, int need, char *err, size_t err_len) {
    while (c->num_pages < need) {
        int32_t id;
        int rc = pl_page_pool_alloc(c->pool, &id, err, err_len);
        if (rc != PL_OK) return rc;
        c->page_ids[c->num_pages] = id;
        c->page_lens[c->num_pages] = 0;
        c->num_pages++;
    }
    return PL_OK;
}

static int pages_for(const pl_seq_cache *c, int tokens) {
    int ps = page_size_of(c);
    return (int)(((long long)tokens + ps - 1) / ps);
}

int pl_seq_cache_holds(const pl_seq_cache *c, int n) {
    return c && c->pool && n >= 0 && (long long)c->offset + n <= PL_SEQ_MAX_TOKENS && pages_for(c, c->offset + n) <= c->num_pages;
}

int pl_seq_cache_reserve_begin(pl_seq_cache *c, int n, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_reserve", err, err_len);
    if (rc != PL_OK) return rc;
    if (n < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_reserve: n must be nonnegative, got %d", n);
    if ((long long)c->offset + n > PL_SEQ_MAX_TOKENS)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_reserve: offset %d + n %d is too large", c->offset, n);
    int need = pages_for(c, c->offset + n);
    if ((rc = ensure_meta(c, need, err, err_len)) != PL_OK) return rc;
    if ((rc = pl_page_pool_txn_begin(c->pool, err, err_len)) != PL_OK) return rc;
    c->txn_pages = c->num_pages;
    rc = take_pages(c, need, err, err_len);
    if (rc != PL_OK) pl_seq_cache_reserve_end(c, 0);
    return rc;
}

void pl_seq_cache_reserve_end(pl_seq_cache *c, int commit) {
    if (commit) {
        pl_page_pool_txn_commit(c->pool);
    } else {
        pl_page_pool_txn_rollback(c->pool);
        c->num_pages = c->txn_pages;
    }
}

int pl_seq_cache_reserve(pl_seq_cache *c, int n, char *err, size_t err_len) {
    if (pl_seq_cache_holds(c, n)) return PL_OK; /* most decode steps: no transaction */
    int rc = pl_seq_cache_reserve_begin(c, n, err, err_len);
    if (rc == PL_OK) pl_seq_cache_reserve_end(c, 1);
    return rc;
}

int pl_seq_cache_append(pl_seq_cache *c, const pl_kv_chunk *chunk, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_append", err, err_len);
    if (rc != PL_OK) return rc;
    /* Chunk shape and dtype are checked before anything is allocated. */
    if ((rc = pl_page_pool_check_chunk(c->pool, chunk, err, err_len)) != PL_OK) return rc;
    const pl_page_pool_config *cfg = pl_page_pool_get_config(c->pool);
    if ((long long)c->offset + chunk->num_tokens > PL_SEQ_MAX_TOKENS)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_append: offset %d + %d tokens is too large", c->offset,
                       chunk->num_tokens);

    const int ps = cfg->page_size, n = chunk->num_tokens;
    int need = pages_for(c, c->offset + n);
    if ((rc = ensure_meta(c, need, err, err_len)) != PL_OK) return rc;
    if ((rc = pl_page_pool_txn_begin(c->pool, err, err_len)) != PL_OK) return rc;
    int saved_pages = c->num_pages;
    rc = take_pages(c, need, err, err_len);
    for (int done = 0; rc == PL_OK && done < n;) {
        int pos = c->offset + done, page = pos / ps, slot = pos % ps;
        int take = ps - slot < n - done ? ps - slot : n - done;
        rc = pl_page_pool_write(c->pool, c->page_ids[page], slot, chunk, done, take, err, err_len);
        done += take;
    }
    if (rc != PL_OK) {
        pl_page_pool_txn_rollback(c->pool);
        c->num_pages = saved_pages;
        refresh_lens(c, 0);
        return rc;
    }
    pl_page_pool_txn_commit(c->pool);
    int first_changed = c->offset / ps;
    c->offset += n;
    refresh_lens(c, first_changed);
    return PL_OK;
}

int pl_seq_cache_commit(pl_seq_cache *c, int n, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_commit", err, err_len);
    if (rc != PL_OK) return rc;
    int reserved = c->num_pages * page_size_of(c) - c->offset;
    if (n < 0 || n > reserved)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_commit: n %d is outside [0, %d reserved slots]", n, reserved);
    int first_changed = c->offset / page_size_of(c);
    c->offset += n;
    refresh_lens(c, first_changed);
    return PL_OK;
}

int pl_seq_cache_release(pl_seq_cache *c, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_release", err, err_len);
    if (rc != PL_OK) return rc;
    /* Validate first so a corrupted cache changes nothing. */
    for (int i = 0; i < c->num_pages; i++)
        if (!pl_page_pool_is_live(c->pool, c->page_ids[i]))
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "pl_seq_cache_release: page %d (index %d) is not live in the pool",
                           (int)c->page_ids[i], i);
    for (int i = 0; i < c->num_pages; i++) pl_page_pool_free(c->pool, c->page_ids[i], NULL, 0);
    c->num_pages = 0;
    c->offset = 0;
    return PL_OK;
}

int pl_seq_cache_rewind(pl_seq_cache *c, int n, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_rewind", err, err_len);
    if (rc != PL_OK) return rc;
    if (n < 0 || n > c->offset)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_rewind: n %d is outside [0, offset %d]", n, c->offset);
    if (n == 0) return PL_OK;
    if (n == c->offset) return pl_seq_cache_release(c, err, err_len);
    int keep = pages_for(c, c->offset - n);
    for (int i = keep; i < c->num_pages; i++)
        if (!pl_page_pool_is_live(c->pool, c->page_ids[i]))
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "pl_seq_cache_rewind: page %d is not live in the pool", (int)c->page_ids[i]);
    while (c->num_pages > keep) pl_page_pool_free(c->pool, c->page_ids[--c->num_pages], NULL, 0);
    c->offset -= n;
    refresh_lens(c, 0);
    return PL_OK;
}

int pl_seq_cache_gather(const pl_seq_cache *c, void *k_out, void *v_out, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_gather", err, err_len);
    if (rc != PL_OK) return rc;
    if (!k_out || !v_out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_gather: k_out and v_out must not be NULL");
    if (c->offset <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_seq_cache_gather: the cache is empty (offset 0)");
    const pl_page_pool_config *cfg = pl_page_pool_get_config(c->pool);
    const char *K = pl_page_pool_keys(c->pool), *V = pl_page_pool_values(c->pool);
    if (!K) return pl_fail(err, err_len, PL_ERR_INTERNAL, "pl_seq_cache_gather: pool has no storage");
    const int H = cfg->num_kv_heads, D = cfg->head_dim, ps = cfg->page_size, S = c->offset;
    const size_t es = pl_page_pool_elem_size(c->pool);
    for (int h = 0; h < H; h++)
        for (int p = 0; p * ps < S; p++) {
            int len = S - p * ps < ps ? S - p * ps : ps;
            size_t src = (((size_t)c->page_ids[p] * (size_t)H + (size_t)h) * (size_t)ps) * (size_t)D;
            size_t dst = ((size_t)h * (size_t)S + (size_t)p * (size_t)ps) * (size_t)D;
            memcpy((char *)k_out + dst * es, K + src * es, (size_t)len * (size_t)D * es);
            memcpy((char *)v_out + dst * es, V + src * es, (size_t)len * (size_t)D * es);
        }
    return PL_OK;
}

int pl_seq_cache_tail_slots(const pl_seq_cache *c) {
    if (!c || !c->pool || c->num_pages == 0) return 0;
    return c->num_pages * page_size_of(c) - c->offset;
}

int pl_seq_cache_check(const pl_seq_cache *c, char *err, size_t err_len) {
    int rc = check_cache(c, "pl_seq_cache_check", err, err_len);
    if (rc != PL_OK) return rc;
    int ps = page_size_of(c), sum = 0;
    if (c->num_pages < pages_for(c, c->offset))
        return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: %d pages cannot hold offset %d", c->num_pages, c->offset);
    for (int i = 0; i < c->num_pages; i++) {
        if (!pl_page_pool_is_live(c->pool, c->page_ids[i]))
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: page %d (index %d) is not live", (int)c->page_ids[i], i);
        for (int j = 0; j < i; j++)
            if (c->page_ids[j] == c->page_ids[i])
                return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: page %d is listed twice", (int)c->page_ids[i]);
        int len = c->page_lens[i];
        if (len < 0 || len > ps) return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: page_lens[%d] = %d", i, len);
        if (len < ps && i + 1 < c->num_pages && c->page_lens[i + 1] > 0)
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: page %d is not full but a later page has tokens", i);
        sum += len;
    }
    if (sum != c->offset) return pl_fail(err, err_len, PL_ERR_INTERNAL, "seq cache: sum(page_lens) %d != offset %d", sum, c->offset);
    return PL_OK;
}
