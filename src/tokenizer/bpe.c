#include "tokenizer/bpe.h"

#include <stdlib.h>
#include <string.h>

#include "pagellm/status.h"

#define SMALL_WORD 48 /* up to this many bytes: rescan an array; longer: heap + linked list */

static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static inline size_t hash_pair(uint64_t key, size_t mask) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 31)) & mask;
}

static size_t pow2_at_least(size_t n) {
    size_t p = 16;
    while (p < n) p <<= 1;
    return p;
}

int32_t pl_bpe_lookup(const pl_bpe *b, const unsigned char *s, size_t n) {
    uint64_t hv = hash_bytes(s, n);
    size_t h = (size_t)hv & b->vmask;
    uint32_t tag = (uint32_t)(hv >> 32);
    for (;;) {
        uint64_t e = b->vmap[h];
        if (!e) return -1;
        if ((uint32_t)(e >> 32) == tag) {
            int32_t id = (int32_t)(uint32_t)e - 1;
            if ((size_t)b->len[id] == n && memcmp(b->arena + b->off[id], s, n) == 0) return id;
        }
        h = (h + 1) & b->vmask;
    }
}

/* Rank of merging (l, r), UINT32_MAX when they do not merge; *nw gets the merged id. */
static inline uint32_t merge_find(const pl_bpe *b, int32_t l, int32_t r, int32_t *nw) {
    uint64_t key = ((uint64_t)(uint32_t)l << 32) | (uint32_t)r;
    size_t h = hash_pair(key, b->mmask);
    for (;;) {
        const struct pl_bpe_merge *e = &b->merges[h];
        if (e->key == key) {
            *nw = e->merged;
            return e->rank;
        }
        if (e->key == UINT64_MAX) return UINT32_MAX;
        h = (h + 1) & b->mmask;
    }
}

int pl_token_buf_push(pl_token_buf *out, int32_t id) {
    if (out->n == out->cap) {
        size_t nc = out->cap ? out->cap * 2 : 64;
        int32_t *p = realloc(out->ids, nc * sizeof *p);
        if (!p) return PL_ERR_NOMEM;
        out->ids = p;
        out->cap = nc;
    }
    out->ids[out->n++] = id;
    return 0;
}

void pl_bpe_scratch_free(pl_bpe_scratch *sc) {
    free(sc->ids);
    free(sc->rank);
    free(sc->prev);
    free(sc->next);
    free(sc->heap);
    memset(sc, 0, sizeof *sc);
}

static int scratch_reserve(pl_bpe_scratch *sc, size_t n) {
    if (n <= sc->cap) return 0;
    size_t nc = pow2_at_least(n);
    int32_t *ids = realloc(sc->ids, nc * sizeof *ids);
    if (ids) sc->ids = ids;
    uint32_t *rank = realloc(sc->rank, nc * sizeof *rank);
    if (rank) sc->rank = rank;
    int32_t *prev = realloc(sc->prev, nc * sizeof *prev);
    if (prev) sc->prev = prev;
    int32_t *next = realloc(sc->next, nc * sizeof *next);
    if (next) sc->next = next;
    if (!ids || !rank || !prev || !next) return 1;
    sc->cap = nc;
    return 0;
}

/* Lowest-rank pair first, leftmost on ties, by rescanning an array of pair ranks. */
static int encode_small(const pl_bpe *b, const unsigned char *s, size_t n, pl_bpe_scratch *sc, pl_token_buf *out) {
    int32_t *ids = sc->ids;
    uint32_t *rank = sc->rank;
    int32_t nws[SMALL_WORD];
    for (size_t i = 0; i < n; i++) ids[i] = b->byte_id[s[i]];
    for (size_t i = 0; i + 1 < n; i++) rank[i] = merge_find(b, ids[i], ids[i + 1], &nws[i]);
    size_t m = n;
    while (m > 1) {
        uint32_t best = UINT32_MAX;
        size_t k = 0;
        for (size_t i = 0; i + 1 < m; i++)
            if (rank[i] < best) {
                best = rank[i];
                k = i;
            }
        if (best == UINT32_MAX) break;
        ids[k] = nws[k];
        for (size_t i = k + 1; i + 1 < m; i++) {
            ids[i] = ids[i + 1];
            rank[i] = rank[i + 1];
            nws[i] = nws[i + 1];
        }
        m--;
        if (k > 0) rank[k - 1] = merge_find(b, ids[k - 1], ids[k], &nws[k - 1]);
        if (k + 1 < m) rank[k] = merge_find(b, ids[k], ids[k + 1], &nws[k]);
    }
    for (size_t i = 0; i < m; i++)
        if (pl_token_buf_push(out, ids[i])) return 1;
    return 0;
}

/* Min-heap of (rank << 32 | position) keys. */
static void heap_push(uint64_t *h, size_t *n, uint64_t v) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static uint64_t heap_pop(uint64_t *h, size_t *n) {
    uint64_t top = h[0], v = h[--(*n)];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && h[c + 1] < h[c]) c++;
        if (v <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    if (m) h[i] = v;
    return top;
}

/* Same order as encode_small, O(n log n): symbols in a linked list indexed by their first
 * byte, candidate merges in a heap, stale entries skipped when popped. */
static int encode_large(const pl_bpe *b, const unsigned char *s, size_t n, pl_bpe_scratch *sc, pl_token_buf *out) {
    int32_t *ids = sc->ids, *prev = sc->prev, *next = sc->next;
    if (sc->heap_cap < 2 * n) {
        uint64_t *h = realloc(sc->heap, 2 * n * sizeof *h);
        if (!h) return 1;
        sc->heap = h;
        sc->heap_cap = 2 * n;
    }
    uint64_t *heap = sc->heap;
    size_t hn = 0;
    for (size_t i = 0; i < n; i++) {
        ids[i] = b->byte_id[s[i]];
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < n ? (int32_t)(i + 1) : -1;
    }
    int32_t nw;
    for (size_t i = 0; i + 1 < n; i++) {
        uint32_t r = merge_find(b, ids[i], ids[i + 1], &nw);
        if (r != UINT32_MAX) heap_push(heap, &hn, ((uint64_t)r << 32) | i);
    }
    while (hn) {
        uint64_t top = heap_pop(heap, &hn);
        uint32_t r = (uint32_t)(top >> 32);
        int32_t pos = (int32_t)(uint32_t)top;
        if (ids[pos] < 0 || next[pos] < 0) continue;
        int32_t nx = next[pos];
        if (merge_find(b, ids[pos], ids[nx], &nw) != r) continue;
        ids[pos] = nw;
        ids[nx] = -1;
        next[pos] = next[nx];
        if (next[pos] >= 0) prev[next[pos]] = pos;
        if (hn + 2 > sc->heap_cap) {
            uint64_t *h = realloc(sc->heap, 2 * sc->heap_cap * sizeof *h);
            if (!h) return 1;
            sc->heap = heap = h;
            sc->heap_cap *= 2;
        }
        if (prev[pos] >= 0) {
            uint32_t rr = merge_find(b, ids[prev[pos]], ids[pos], &nw);
            if (rr != UINT32_MAX) heap_push(heap, &hn, ((uint64_t)rr << 32) | (uint32_t)prev[pos]);
        }
        if (next[pos] >= 0) {
            uint32_t rr = merge_find(b, ids[pos], ids[next[pos]], &nw);
            if (rr != UINT32_MAX) heap_push(heap, &hn, ((uint64_t)rr << 32) | (uint32_t)pos);
        }
    }
    for (int32_t i = 0; i >= 0; i = next[i])
        if (pl_token_buf_push(out, ids[i])) return 1;
    return 0;
}

int pl_bpe_encode_word(const pl_bpe *b, const unsigned char *s, size_t n, int fast, pl_bpe_scratch *sc,
                       pl_token_buf *out) {
    if (fast) {
        int32_t id = pl_bpe_lookup(b, s, n);
        if (id >= 0 && b->whole[id]) return pl_token_buf_push(out, id);
    }
    if (n == 1) return pl_token_buf_push(out, b->byte_id[s[0]]);
    if (scratch_reserve(sc, n)) return 1;
    return n <= SMALL_WORD ? encode_small(b, s, n, sc, out) : encode_large(b, s, n, sc, out);
}

int pl_bpe_encode_word_reference(const pl_bpe *b, const unsigned char *s, size_t n, pl_token_buf *out) {
    int32_t *ids = malloc(n * sizeof *ids);
    if (!ids) return 1;
    for (size_t i = 0; i < n; i++) ids[i] = b->byte_id[s[i]];
    size_t m = n;
    for (;;) {
        uint32_t best = UINT32_MAX;
        size_t k = 0;
        int32_t best_new = -1, nw;
        for (size_t i = 0; i + 1 < m; i++) {
            uint32_t r = merge_find(b, ids[i], ids[i + 1], &nw);
            if (r < best) {
                best = r;
                k = i;
                best_new = nw;
            }
        }
        if (best == UINT32_MAX) break;
        ids[k] = best_new;
        memmove(ids + k + 1, ids + k + 2, (m - k - 2) * sizeof *ids);
        m--;
    }
    int rc = 0;
    for (size_t i = 0; i < m && !rc; i++) rc = pl_token_buf_push(out, ids[i]);
    free(ids);
    return rc;
}

int pl_bpe_init(pl_bpe *b, int32_t num_ids, const unsigned char *const *tokens, const int32_t *lens,
                size_t num_merges, char *err, size_t err_len) {
    memset(b, 0, sizeof *b);
    b->num_ids = num_ids;
    size_t total = 0;
    for (int32_t i = 0; i < num_ids; i++)
        if (lens[i] > 0) total += (size_t)lens[i];
    b->off = calloc((size_t)num_ids, sizeof *b->off);
    b->len = malloc((size_t)num_ids * sizeof *b->len);
    b->arena = malloc(total + 1);
    b->whole = calloc((size_t)num_ids, 1);
    b->vmask = pow2_at_least((size_t)num_ids * 2) - 1;
    b->vmap = calloc(b->vmask + 1, sizeof *b->vmap);
    b->mmask = pow2_at_least(num_merges * 2) - 1;
    b->merges = malloc((b->mmask + 1) * sizeof *b->merges);
    if (!b->off || !b->len || !b->arena || !b->whole || !b->vmap || !b->merges) {
        pl_bpe_free(b);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory building BPE tables");
    }
    for (size_t i = 0; i <= b->mmask; i++) b->merges[i] = (struct pl_bpe_merge){UINT64_MAX, 0, -1};
    size_t o = 0;
    for (int32_t i = 0; i < num_ids; i++) {
        b->len[i] = lens[i] > 0 ? lens[i] : -1;
        if (lens[i] <= 0) continue;
        b->off[i] = (uint32_t)o;
        memcpy(b->arena + o, tokens[i], (size_t)lens[i]);
        o += (size_t)lens[i];
        if (pl_bpe_lookup(b, tokens[i], (size_t)lens[i]) >= 0) {
            int rc = pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer.json: vocab: id %d repeats the bytes of another token",
                             (int)i);
            pl_bpe_free(b);
            return rc;
        }
        uint64_t hv = hash_bytes(tokens[i], (size_t)lens[i]);
        size_t h = (size_t)hv & b->vmask;
        while (b->vmap[h]) h = (h + 1) & b->vmask;
        b->vmap[h] = (hv >> 32 << 32) | ((uint64_t)(uint32_t)i + 1);
    }
    b->arena_len = o;
    for (int c = 0; c < 256; c++) {
        unsigned char byte = (unsigned char)c;
        b->byte_id[c] = pl_bpe_lookup(b, &byte, 1);
        if (b->byte_id[c] < 0) {
            pl_bpe_free(b);
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                           "tokenizer.json: vocab lacks the byte-level token of byte 0x%02X", (unsigned)c);
        }
    }
    return PL_OK;
}

int pl_bpe_set_merges(pl_bpe *b, const int32_t *merge_left, const int32_t *merge_right, size_t num_merges, char *err,
                      size_t err_len) {
    for (size_t m = 0; m < num_merges; m++)
        if (merge_left[m] < 0 || merge_left[m] >= b->num_ids || b->len[merge_left[m]] <= 0 || merge_right[m] < 0 ||
            merge_right[m] >= b->num_ids || b->len[merge_right[m]] <= 0)
            return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer.json: merges[%zu]: a part is not in the vocab", m);
    if (num_merges * 2 > b->mmask + 1)
        return pl_fail(err, err_len, PL_ERR_INTERNAL, "tokenizer: merge table sized for fewer merges");
    unsigned char *tmp = malloc(2 * b->arena_len + 1);
    if (!tmp) {
        return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory building BPE tables");
    }
    for (size_t m = 0; m < num_merges; m++) {
        int32_t l = merge_left[m], r = merge_right[m];
        size_t ll = (size_t)b->len[l], rl = (size_t)b->len[r];
        memcpy(tmp, b->arena + b->off[l], ll);
        memcpy(tmp + ll, b->arena + b->off[r], rl);
        int32_t nw = pl_bpe_lookup(b, tmp, ll + rl);
        if (nw < 0) {
            free(tmp);
            return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer.json: merges[%zu]: the merged token is not in the vocab",
                           m);
        }
        uint64_t key = ((uint64_t)(uint32_t)l << 32) | (uint32_t)r;
        size_t h = hash_pair(key, b->mmask);
        while (b->merges[h].key != UINT64_MAX && b->merges[h].key != key) h = (h + 1) & b->mmask;
        if (b->merges[h].key == key) continue; /* a repeated merge keeps its first (lowest) rank */
        b->merges[h] = (struct pl_bpe_merge){key, (uint32_t)m, nw};
    }
    free(tmp);
    /* Which tokens BPE reproduces whole: for those the fast path may skip merging exactly. */
    pl_bpe_scratch sc = {0};
    pl_token_buf tb = {0};
    for (int32_t i = 0; i < b->num_ids; i++) {
        if (b->len[i] <= 0) continue;
        tb.n = 0;
        if (pl_bpe_encode_word(b, b->arena + b->off[i], (size_t)b->len[i], 0, &sc, &tb)) {
            pl_bpe_scratch_free(&sc);
            pl_token_buf_free(&tb);
            return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory building BPE tables");
        }
        b->whole[i] = tb.n == 1 && tb.ids[0] == i;
    }
    pl_bpe_scratch_free(&sc);
    pl_token_buf_free(&tb);
    return PL_OK;
}

void pl_bpe_free(pl_bpe *b) {
    free(b->off);
    free(b->len);
    free(b->arena);
    free(b->whole);
    free(b->vmap);
    free(b->merges);
    memset(b, 0, sizeof *b);
}
