/* Page pool: K/V storage [capacity, H_kv, page_size, D], a LIFO free stack, and the
 * reference's growth rule and counters. */
#define _DEFAULT_SOURCE /* madvise */
#include "kv/page_pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct pool_txn {
    int active;
    int num_pages, capacity, free_count, live_count;
    int64_t reused, growths, copied_pages, copied_bytes;
    void *k, *v;              /* storage at begin: kept alive until commit */
    int32_t *ids;             /* ids allocated inside the transaction, in order */
    uint8_t *reused_flags;    /* 1 when that id came from the free stack */
    int n_ids, cap_ids;
} pool_txn;

struct pl_page_pool {
    pl_page_pool_config cfg;
    pl_kv_storage_ops ops;
    size_t elem_size;   /* bytes per element */
    size_t page_elems;  /* elements of one page in K (same in V) */
    void *k, *v;
    int capacity;       /* pages of storage */
    int num_pages;      /* high-water mark */
    int meta_cap;       /* length of live[] and free_stack[] */
    uint8_t *live;
    int32_t *free_stack;
    int free_count, live_count;
    int64_t reused, growths, copied_pages, copied_bytes;
    int fail_write_countdown;
    pool_txn txn;
};

static void *host_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    /* Large storage on 2 MiB huge pages: attention jumps between pages at random places, and
     * fewer TLB misses measured 46% -> 53% of read bandwidth in decode (docs/PERF.md). */
    const size_t huge = (size_t)2 << 20;
    size_t align = bytes >= huge ? huge : 64;
    size_t rounded = (bytes + align - 1) & ~(align - 1);
    void *p = aligned_alloc(align, rounded ? rounded : align);
    if (!p) return NULL;
    if (align == huge) madvise(p, rounded, MADV_HUGEPAGE); /* a hint: failure is harmless */
    memset(p, 0, rounded);
    return p;
}

static void host_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}

static int host_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    (void)ctx;
    memcpy(dst, src, bytes);
    return PL_OK;
}

static const pl_kv_storage_ops k_host_ops = {host_alloc, host_free, host_copy, NULL};

static size_t dtype_size(pl_dtype d) { return d == PL_BF16 ? 2 : 4; }

size_t pl_page_pool_elem_size(const pl_page_pool *pool) { return pool->elem_size; }

static size_t storage_bytes(const pl_page_pool *p, int pages) {
    return (size_t)pages * p->page_elems * p->elem_size;
}

static void release_storage(pl_page_pool *p, void *k, void *v) {
    if (k) p->ops.free(p->ops.ctx, k);
    if (v) p->ops.free(p->ops.ctx, v);
}

/* Allocates K and V of `pages` pages; both or neither. */
static int alloc_storage(pl_page_pool *p, int pages, void **k, void **v) {
    size_t bytes = storage_bytes(p, pages);
    *k = p->ops.alloc(p->ops.ctx, bytes);
    *v = *k ? p->ops.alloc(p->ops.ctx, bytes) : NULL;
    if (!*k || !*v) {
        release_storage(p, *k, *v);
        *k = *v = NULL;
        return PL_ERR_NOMEM;
    }
    return PL_OK;
}

static int grow_meta(pl_page_pool *p, int need) {
    if (need <= p->meta_cap) return PL_OK;
    int cap = p->meta_cap ? p->meta_cap : 16;
    while (cap < need) cap *= 2;
    uint8_t *live = realloc(p->live, (size_t)cap);
    if (!live) return PL_ERR_NOMEM;
    p->live = live;
    memset(p->live + p->meta_cap, 0, (size_t)(cap - p->meta_cap));
    int32_t *fs = realloc(p->free_stack, sizeof(int32_t) * (size_t)cap);
    if (!fs) return PL_ERR_NOMEM;
    p->free_stack = fs;
    p->meta_cap = cap;
    return PL_OK;
}

int pl_page_pool_create(const pl_page_pool_config *cfg, pl_page_pool **out, char *err, size_t err_len) {
    if (!out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: out is NULL");
    *out = NULL;
    if (!cfg) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: cfg is NULL");
    if (cfg->dtype != PL_F32 && cfg->dtype != PL_BF16)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: dtype %d is not PL_F32 or PL_BF16", (int)cfg->dtype);
    if (cfg->num_kv_heads <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: num_kv_heads must be positive, got %d", cfg->num_kv_heads);
    if (cfg->page_size <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: page_size must be a positive integer, got %d", cfg->page_size);
    if (cfg->head_dim <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: head_dim must be positive, got %d", cfg->head_dim);
    if (cfg->mode != PL_POOL_GROWABLE && cfg->mode != PL_POOL_CAPPED)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: mode %d is not growable or capped", (int)cfg->mode);
    if (cfg->mode == PL_POOL_CAPPED && cfg->capped_pages <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: capped_pages must be positive in capped mode, got %d", cfg->capped_pages);
    if (cfg->storage && (!cfg->storage->alloc || !cfg->storage->free || !cfg->storage->copy))
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: storage ops need alloc, free and copy");
    if ((size_t)cfg->num_kv_heads * (size_t)cfg->page_size * (size_t)cfg->head_dim > ((size_t)1 << 40))
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_create: page of %d x %d x %d elements is too large",
                       cfg->num_kv_heads, cfg->page_size, cfg->head_dim);

    pl_page_pool *p = calloc(1, sizeof *p);
    if (!p) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_page_pool_create: out of memory");
    p->cfg = *cfg;
    p->ops = cfg->storage ? *cfg->storage : k_host_ops;
    p->cfg.storage = NULL; /* the copy in ops is what we use */
    p->elem_size = dtype_size(cfg->dtype);
    p->page_elems = (size_t)cfg->num_kv_heads * (size_t)cfg->page_size * (size_t)cfg->head_dim;
    if (cfg->mode == PL_POOL_CAPPED) {
        if (alloc_storage(p, cfg->capped_pages, &p->k, &p->v) != PL_OK || grow_meta(p, cfg->capped_pages) != PL_OK) {
            pl_page_pool_destroy(p);
            return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_page_pool_create: cannot allocate %d pages (%zu bytes)",
                           cfg->capped_pages, 2 * storage_bytes(p, cfg->capped_pages));
        }
        p->capacity = cfg->capped_pages;
    }
    *out = p;
    return PL_OK;
}

void pl_page_pool_destroy(pl_page_pool *p) {
    if (!p) return;
    if (p->txn.active) pl_page_pool_txn_rollback(p);
    release_storage(p, p->k, p->v);
    free(p->live);
    free(p->free_stack);
    free(p->txn.ids);
    free(p->txn.reused_flags);
    free(p);
}

/* Growable mode: make room for num_pages pages, per the reference rule. */
static int ensure_capacity(pl_page_pool *p, char *err, size_t err_len) {
    if (p->k && p->capacity >= p->num_pages) return PL_OK;
    int new_cap = p->num_pages;
    if (new_cap < 4) new_cap = 4;
    if (new_cap < 2 * p->capacity) new_cap = 2 * p->capacity;
    void *nk, *nv;
    if (alloc_storage(p, new_cap, &nk, &nv) != PL_OK)
        return pl_fail(err, err_len, PL_ERR_NOMEM, "page pool: cannot grow storage to %d pages (%zu bytes)", new_cap,
                       2 * storage_bytes(p, new_cap));
    if (p->k) {
        int copy_pages = p->num_pages - 1; /* every page but the one just handed out */
        size_t bytes = storage_bytes(p, copy_pages);
        int rc = p->ops.copy(p->ops.ctx, nk, p->k, bytes);
        if (rc == PL_OK) rc = p->ops.copy(p->ops.ctx, nv, p->v, bytes);
        if (rc != PL_OK) {
            release_storage(p, nk, nv);
            return pl_fail(err, err_len, rc, "page pool: copying %d pages on growth failed", copy_pages);
        }
        p->copied_pages += copy_pages;
        p->copied_bytes += (int64_t)(2 * bytes);
        /* Inside a transaction the storage it began with must survive for rollback. */
        if (!(p->txn.active && p->k == p->txn.k)) release_storage(p, p->k, p->v);
    }
    p->k = nk;
    p->v = nv;
    p->capacity = new_cap;
    p->growths++;
    return PL_OK;
}

static int txn_record(pl_page_pool *p, int32_t id, int reused) {
    pool_txn *t = &p->txn;
    if (t->n_ids == t->cap_ids) {
        int cap = t->cap_ids ? 2 * t->cap_ids : 16;
        int32_t *ids = realloc(t->ids, sizeof(int32_t) * (size_t)cap);
        if (!ids) return PL_ERR_NOMEM;
        t->ids = ids;
        uint8_t *fl = realloc(t->reused_flags, (size_t)cap);
        if (!fl) return PL_ERR_NOMEM;
        t->reused_flags = fl;
        t->cap_ids = cap;
    }
    t->ids[t->n_ids] = id;
    t->reused_flags[t->n_ids] = (uint8_t)reused;
    t->n_ids++;
    return PL_OK;
}

int pl_page_pool_alloc(pl_page_pool *p, int32_t *page_id, char *err, size_t err_len) {
    if (!p) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_alloc: pool is NULL");
    if (!page_id) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_alloc: page_id is NULL");
    /* Reserve bookkeeping room first so nothing below can fail half-way. */
    if (grow_meta(p, p->num_pages + 1) != PL_OK || (p->txn.active && txn_record(p, -1, 0) != PL_OK))
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_page_pool_alloc: out of memory");
    if (p->txn.active) p->txn.n_ids--; /* slot reserved; filled below */
    int32_t id;
    int reused = 0;
    if (p->free_count > 0) {
        id = p->free_stack[--p->free_count];
        reused = 1;
        p->reused++;
    } else {
        if (p->cfg.mode == PL_POOL_CAPPED && p->num_pages >= p->capacity)
            return pl_fail(err, err_len, PL_ERR_NO_PAGES, "page pool: all %d pages of the capped budget are live", p->capacity);
        id = p->num_pages++;
        if (p->cfg.mode == PL_POOL_GROWABLE) {
            int rc = ensure_capacity(p, err, err_len);
            if (rc != PL_OK) {
                p->num_pages--;
                return rc;
            }
        }
    }
    p->live[id] = 1;
    p->live_count++;
    if (p->txn.active) txn_record(p, id, reused); /* cannot fail: room reserved above */
    *page_id = id;
    return PL_OK;
}

int pl_page_pool_free(pl_page_pool *p, int32_t id, char *err, size_t err_len) {
    if (!p) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_free: pool is NULL");
    if (id < 0 || id >= p->num_pages)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_free: page %d is out of range [0, %d)", (int)id, p->num_pages);
    if (!p->live[id]) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_free: Page %d is already free", (int)id);
    p->live[id] = 0;
    p->live_count--;
    p->free_stack[p->free_count++] = id; /* meta_cap >= num_pages, so there is room */
    return PL_OK;
}

int pl_page_pool_reset(pl_page_pool *p, char *err, size_t err_len) {
    if (!p) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_reset: pool is NULL");
    if (p->live_count > 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_reset: cannot reset a pool with live requests (%d live pages)", p->live_count);
    if (p->txn.active) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_reset: a transaction is open");
    if (p->cfg.mode == PL_POOL_GROWABLE) {
        release_storage(p, p->k, p->v);
        p->k = p->v = NULL;
        p->capacity = 0;
    }
    p->num_pages = 0;
    p->free_count = 0;
    p->reused = p->growths = p->copied_pages = p->copied_bytes = 0;
    return PL_OK;
}

void pl_page_pool_get_stats(const pl_page_pool *p, pl_page_pool_stats *s) {
    memset(s, 0, sizeof *s);
    if (!p) return;
    s->num_pages = p->num_pages;
    s->live_pages = p->live_count;
    s->free_pages = p->free_count;
    s->capacity_pages = p->capacity;
    s->reused_allocations = p->reused;
    s->growths = p->growths;
    s->copied_pages = p->copied_pages;
    s->copied_bytes = p->copied_bytes;
    s->storage_bytes = 2 * storage_bytes(p, p->capacity);
    s->page_bytes = 2 * storage_bytes(p, 1);
}

const pl_page_pool_config *pl_page_pool_get_config(const pl_page_pool *p) { return p ? &p->cfg : NULL; }
void *pl_page_pool_keys(const pl_page_pool *p) { return p ? p->k : NULL; }
void *pl_page_pool_values(const pl_page_pool *p) { return p ? p->v : NULL; }

int pl_page_pool_is_live(const pl_page_pool *p, int32_t id) {
    return p && id >= 0 && id < p->num_pages && p->live[id];
}

void pl_page_pool_inject_write_failure(pl_page_pool *p, int nth_write) {
    if (p) p->fail_write_countdown = nth_write > 0 ? nth_write : 0;
}

int pl_page_pool_check_chunk(const pl_page_pool *p, const pl_kv_chunk *c, char *err, size_t err_len) {
    if (!c) return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk is NULL");
    if (!c->k || !c->v) return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: k and v must not be NULL");
    if (c->dtype != PL_F32 && c->dtype != PL_BF16)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: dtype %d must be float32 or bfloat16", (int)c->dtype);
    if (c->num_tokens <= 0 || c->num_kv_heads <= 0 || c->head_dim <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: tokens, heads and head_dim must be positive, got %d, %d, %d",
                       c->num_tokens, c->num_kv_heads, c->head_dim);
    if (c->num_kv_heads != p->cfg.num_kv_heads || c->head_dim != p->cfg.head_dim)
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "kv chunk: (heads %d, head_dim %d) must match the existing page storage shape (%d, %d)",
                       c->num_kv_heads, c->head_dim, p->cfg.num_kv_heads, p->cfg.head_dim);
    if (c->dtype != p->cfg.dtype)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: dtype %s must match the existing page storage dtype %s",
                       c->dtype == PL_BF16 ? "bfloat16" : "float32", p->cfg.dtype == PL_BF16 ? "bfloat16" : "float32");
    size_t row = (size_t)c->num_kv_heads * (size_t)c->head_dim;
    if (c->token_stride != 0 && c->token_stride < row)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: token_stride %zu is smaller than heads x head_dim = %zu",
                       c->token_stride, row);
    return PL_OK;
}

/* Exposed to seq_cache.c through kv.h's declaration of pl_page_pool_write. */
int pl_page_pool_write(pl_page_pool *p, int32_t id, int slot, const pl_kv_chunk *c, int first, int count, char *err,
                       size_t err_len) {
    if (!p) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: pool is NULL");
    int rc = pl_page_pool_check_chunk(p, c, err, err_len);
    if (rc != PL_OK) return rc;
    if (first < 0 || count <= 0 || first + count > c->num_tokens)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: tokens [%d, %d) are outside the chunk of %d", first,
                       first + count, c->num_tokens);
    if (count > p->cfg.page_size)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: %d tokens cannot exceed one physical page of %d", count,
                       p->cfg.page_size);
    if (id < 0 || id >= p->num_pages)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: page %d is out of range [0, %d)", (int)id, p->num_pages);
    if (!p->live[id]) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: page %d is free", (int)id);
    if (slot < 0 || slot + count > p->cfg.page_size)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_page_pool_write: slots [%d, %d) are outside page storage of %d", slot,
                       slot + count, p->cfg.page_size);
    if (p->ops.alloc != host_alloc)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "pl_page_pool_write: the pool's storage is not host memory");
    if (p->fail_write_countdown > 0 && --p->fail_write_countdown == 0)
        return pl_fail(err, err_len, PL_ERR_IO, "pl_page_pool_write: injected write failure (page %d)", (int)id);

    const int H = p->cfg.num_kv_heads, D = p->cfg.head_dim, ps = p->cfg.page_size;
    const size_t es = p->elem_size;
    const size_t stride = c->token_stride ? c->token_stride : (size_t)H * (size_t)D;
    for (int h = 0; h < H; h++) {
        size_t dst0 = (((size_t)id * (size_t)H + (size_t)h) * (size_t)ps + (size_t)slot) * (size_t)D;
        for (int t = 0; t < count; t++) {
            size_t src = (size_t)(first + t) * stride + (size_t)h * (size_t)D;
            size_t dst = dst0 + (size_t)t * (size_t)D;
            memcpy((char *)p->k + dst * es, (const char *)c->k + src * es, (size_t)D * es);
            memcpy((char *)p->v + dst * es, (const char *)c->v + src * es, (size_t)D * es);
        }
    }
    return PL_OK;
}

int pl_page_pool_txn_begin(pl_page_pool *p, char *err, size_t err_len) {
    if (p->txn.active) return pl_fail(err, err_len, PL_ERR_INTERNAL, "page pool: a transaction is already open");
    pool_txn *t = &p->txn;
    t->active = 1;
    t->num_pages = p->num_pages;
    t->capacity = p->capacity;
    t->free_count = p->free_count;
    t->live_count = p->live_count;
    t->reused = p->reused;
    t->growths = p->growths;
    t->copied_pages = p->copied_pages;
    t->copied_bytes = p->copied_bytes;
    t->k = p->k;
    t->v = p->v;
    t->n_ids = 0;
    return PL_OK;
}

void pl_page_pool_txn_commit(pl_page_pool *p) {
    pool_txn *t = &p->txn;
    if (!t->active) return;
    if (t->k && t->k != p->k) release_storage(p, t->k, t->v);
    t->active = 0;
    t->n_ids = 0;
}

void pl_page_pool_txn_rollback(pl_page_pool *p) {
    pool_txn *t = &p->txn;
    if (!t->active) return;
    /* Undo allocations newest first so the free stack regains its exact order. */
    for (int i = t->n_ids - 1; i >= 0; i--) {
        int32_t id = t->ids[i];
        if (id >= 0 && p->live[id]) p->live[id] = 0;
        if (t->reused_flags[i]) p->free_stack[p->free_count++] = id;
    }
    if (p->k != t->k) {
        release_storage(p, p->k, p->v);
        p->k = t->k;
        p->v = t->v;
    }
    p->num_pages = t->num_pages;
    p->capacity = t->capacity;
    p->free_count = t->free_count;
    p->live_count = t->live_count;
    p->reused = t->reused;
    p->growths = t->growths;
    p->copied_pages = t->copied_pages;
    p->copied_bytes = t->copied_bytes;
    t->active = 0;
    t->n_ids = 0;
}
