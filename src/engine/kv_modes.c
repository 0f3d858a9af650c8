/* The two comparison KV modes, supplied to the model through pl_attend_ops:
 *   dense        - a per-request concatenating dense cache per layer (every append
 *                  allocates the longer cache and copies the old one), and for decode a
 *                  padded dense batch [B, H_kv, S_max, D] rebuilt every layer every step;
 *   paged-gather - the page pools are the storage; every call gathers the request's pages
 *                  back to dense K/V (decode: straight into the padded batch).
 * Both then run the same attention operator as the paged mode, reading the dense buffers as
 * one "page" per request (page_size = S), so the comparison isolates KV management. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

static void *grow(void **buf, size_t *cap, size_t bytes) {
    if (*cap >= bytes && *buf) return *buf;
    size_t n = bytes < 64 ? 64 : bytes;
    n = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n);
    if (!p) return NULL;
    free(*buf);
    *buf = p;
    *cap = n;
    return p;
}

int pl_eng_modes_init(pl_engine *e, char *err, size_t err_len) {
    int L = e->mc.num_layers, B = e->cfg.batch_size;
    e->stage_k = calloc((size_t)L, sizeof(void *));
    e->stage_v = calloc((size_t)L, sizeof(void *));
    e->stage_cap = calloc((size_t)L, sizeof(size_t));
    e->stage_bytes = calloc((size_t)L, sizeof(size_t));
    e->bt = malloc(sizeof(int32_t) * (size_t)B);
    e->ctx_lens = malloc(sizeof(int32_t) * (size_t)B);
    if (!e->stage_k || !e->stage_v || !e->stage_cap || !e->stage_bytes || !e->bt || !e->ctx_lens)
        return pl_fail(err, err_len, PL_ERR_NOMEM, "engine: out of memory for KV-mode state");
    return PL_OK;
}

void pl_eng_stage_drop(pl_engine *e) {
    if (!e->stage_k) return;
    for (int l = 0; l < e->mc.num_layers; l++) {
        free(e->stage_k[l]);
        free(e->stage_v[l]);
        e->stage_k[l] = e->stage_v[l] = NULL;
        e->stage_cap[l] = e->stage_bytes[l] = 0;
    }
}

void pl_eng_modes_free(pl_engine *e) {
    pl_eng_stage_drop(e);
    free(e->stage_k);
    free(e->stage_v);
    free(e->stage_cap);
    free(e->stage_bytes);
    free(e->qbuf);
    free(e->obuf);
    free(e->gk);
    free(e->gv);
    free(e->bt);
    free(e->ctx_lens);
}

size_t pl_eng_stage_bytes(const pl_engine *e) {
    size_t s = 0;
    if (!e->stage_bytes) return 0;
    for (int l = 0; l < e->mc.num_layers; l++) s += e->stage_bytes[l];
    return s;
}

void pl_eng_dense_free(pl_engine *e, pl_req *r) {
    if (!r->dense) return;
    for (int l = 0; l < e->mc.num_layers; l++) {
        free(r->dense[l].k);
        free(r->dense[l].v);
        r->dense[l].k = r->dense[l].v = NULL;
        r->dense[l].len = 0;
    }
}

size_t pl_eng_dense_req_bytes(const pl_engine *e, const pl_req *r) {
    if (!r->dense) return 0;
    size_t s = 0;
    for (int l = 0; l < e->mc.num_layers; l++) s += (size_t)r->dense[l].len * e->token_bytes;
    return s;
}

/* Week-2 concatenation: new [H, len + n, D] buffers, old rows copied per head, new rows
 * written from the token-major projections. */
static int dense_append(pl_engine *e, pl_dense_cache *c, const pl_attend_call *call, int row0, int n, char *err,
                        size_t err_len) {
    const int H = call->num_kv_heads, D = call->head_dim;
    const size_t es = e->elem, row = (size_t)D * es;
    const int old = c->len, len = old + n;
    size_t bytes = ((size_t)H * (size_t)len * row + 63) & ~(size_t)63;
    char *k = aligned_alloc(64, bytes), *v = aligned_alloc(64, bytes);
    if (!k || !v) {
        free(k);
        free(v);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "dense cache: cannot allocate %zu bytes", 2 * bytes);
    }
    for (int h = 0; h < H; h++) {
        if (old) {
            memcpy(k + (size_t)h * len * row, (const char *)c->k + (size_t)h * old * row, (size_t)old * row);
            memcpy(v + (size_t)h * len * row, (const char *)c->v + (size_t)h * old * row, (size_t)old * row);
        }
        for (int t = 0; t < n; t++) {
            size_t src = ((size_t)(row0 + t) * call->qkv_token_stride + (size_t)h * D) * es;
            memcpy(k + ((size_t)h * len + old + t) * row, (const char *)call->k + src, row);
            memcpy(v + ((size_t)h * len + old + t) * row, (const char *)call->v + src, row);
        }
    }
    e->m.dense_growth_copy_bytes += (int64_t)old * (int64_t)e->token_bytes;
    free(c->k);
    free(c->v);
    c->k = k;
    c->v = v;
    c->len = len;
    return PL_OK;
}

/* Copies a paged cache into head-major dense rows with head stride S tokens. */
static void gather_pages(const pl_engine *e, const pl_seq_cache *c, int H, int D, int S, char *k_out, char *v_out) {
    const size_t row = (size_t)D * e->elem;
    const int ps = e->cfg.page_size;
    const char *kp = pl_page_pool_keys(c->pool), *vp = pl_page_pool_values(c->pool);
    int tok = 0;
    for (int p = 0; p < c->num_pages && tok < c->offset; p++) {
        int n = c->page_lens[p];
        if (n > c->offset - tok) n = c->offset - tok;
        for (int h = 0; h < H; h++) {
            size_t src = (((size_t)c->page_ids[p] * H + h) * ps) * row;
            size_t dst = ((size_t)h * S + tok) * row;
            memcpy(k_out + dst, kp + src, (size_t)n * row);
            memcpy(v_out + dst, vp + src, (size_t)n * row);
        }
        tok += n;
    }
}

static int attention(const pl_engine *e, const pl_attend_call *call, int batch, int query_len, int page_size,
                     const void *q, const void *k, const void *v, const int32_t *bt, const int32_t *ctx, void *out,
                     char *err, size_t err_len) {
    pl_paged_attention_args a = {0};
    a.dtype = e->dtype;
    a.batch = batch;
    a.num_heads = call->num_heads;
    a.num_kv_heads = call->num_kv_heads;
    a.query_len = query_len;
    a.head_dim = call->head_dim;
    a.num_pages = batch;
    a.page_size = page_size;
    a.max_pages = 1;
    a.scale = call->scale;
    a.causal = 1;
    a.query = q;
    a.key_pages = k;
    a.value_pages = v;
    a.block_table = bt;
    a.context_lens = ctx;
    a.out = out;
    a.schedule = PL_ATTN_AUTO;
    return pl_paged_attention(&a, err, err_len);
}

/* Query rows into a contiguous [rows, H, D] buffer (q may share a strided qkv buffer). */
static void copy_q(const pl_engine *e, const pl_attend_call *call, int src_row, int n, char *dst) {
    size_t w = (size_t)call->num_heads * call->head_dim * e->elem;
    for (int t = 0; t < n; t++)
        memcpy(dst + (size_t)t * w, (const char *)call->q + (size_t)(src_row + t) * call->qkv_token_stride * e->elem, w);
}

/* Stores the new K/V of sequence i in its cache (dense concatenation or page write). */
static int store(pl_engine *e, const pl_attend_call *call, int i, char *err, size_t err_len) {
    pl_req *r = e->cur[i];
    int n = call->chunk_lens[i];
    if (e->cfg.kv_mode == PL_KV_DENSE) return dense_append(e, &r->dense[call->layer], call, call->row_start[i], n, err, err_len);
    pl_kv_chunk ch = {e->dtype, n, call->num_kv_heads, call->head_dim,
                      (const char *)call->k + (size_t)call->row_start[i] * call->qkv_token_stride * e->elem,
                      (const char *)call->v + (size_t)call->row_start[i] * call->qkv_token_stride * e->elem,
                      call->qkv_token_stride};
    return pl_seq_cache_append(&r->kv.layers[call->layer], &ch, err, err_len);
}

static int ctx_len(const pl_engine *e, const pl_req *r, int layer) {
    return e->cfg.kv_mode == PL_KV_DENSE ? r->dense[layer].len : r->kv.layers[layer].offset;
}

/* One sequence's chunk (prefill): attention over its whole cache as one dense page. */
static int attend_one(pl_engine *e, const pl_attend_call *call, int i, char *err, size_t err_len) {
    pl_req *r = e->cur[i];
    const int H = call->num_kv_heads, D = call->head_dim, n = call->chunk_lens[i], l = call->layer;
    int ctx = ctx_len(e, r, l);
    const void *k, *v;
    if (e->cfg.kv_mode == PL_KV_DENSE) {
        k = r->dense[l].k;
        v = r->dense[l].v;
    } else {
        size_t bytes = (size_t)H * ctx * D * e->elem;
        if (!grow(&e->gk, &e->g_cap, bytes) || !grow(&e->gv, &e->gv_cap, bytes))
            return pl_fail(err, err_len, PL_ERR_NOMEM, "gather: out of memory");
        gather_pages(e, &r->kv.layers[l], H, D, ctx, e->gk, e->gv);
        e->m.gather_prefill_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        k = e->gk;
        v = e->gv;
    }
    const void *q = (const char *)call->q + (size_t)call->row_start[i] * call->qkv_token_stride * e->elem;
    if (call->qkv_token_stride != (size_t)call->num_heads * D) {
        size_t bytes = (size_t)n * call->num_heads * D * e->elem;
        if (!grow(&e->qbuf, &e->qbuf_cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "attend: out of memory");
        copy_q(e, call, call->row_start[i], n, e->qbuf);
        q = e->qbuf;
    }
    int32_t bt = 0, c = ctx;
    void *out = (char *)call->out + (size_t)call->row_start[i] * call->num_heads * D * e->elem;
    return attention(e, call, 1, n, ctx, q, k, v, &bt, &c, out, err, err_len);
}

/* Decode: every row one token; rebuild the padded dense batch [rows, H, S_max, D] of this
 * layer over the occupied slots (empty slots are left out rather than padded: the one
 * liberty taken with the week-2 batch, which pads all B slots). */
static int attend_decode(pl_engine *e, const pl_attend_call *call, char *err, size_t err_len) {
    const int B = call->num_seqs, H = call->num_kv_heads, D = call->head_dim, Hq = call->num_heads, l = call->layer;
    const size_t row = (size_t)D * e->elem;
    int S = 1, rows = 0;
    for (int i = 0; i < B; i++)
        if (call->chunk_lens[i] > 0) {
            rows++;
            if (ctx_len(e, e->cur[i], l) > S) S = ctx_len(e, e->cur[i], l);
        }
    if (!rows) return PL_OK;
    size_t bytes = (size_t)rows * H * S * row;
    size_t cap = e->stage_cap[l];
    if (!grow(&e->stage_k[l], &cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "dense batch: out of memory");
    cap = e->stage_cap[l];
    if (!grow(&e->stage_v[l], &cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "dense batch: out of memory");
    e->stage_cap[l] = cap;
    e->stage_bytes[l] = 2 * bytes;
    char *sk = e->stage_k[l], *sv = e->stage_v[l];
    size_t qw = (size_t)Hq * row;
    if (!grow(&e->qbuf, &e->qbuf_cap, (size_t)rows * qw) || !grow(&e->obuf, &e->obuf_cap, (size_t)rows * qw))
        return pl_fail(err, err_len, PL_ERR_NOMEM, "attend: out of memory");
    int c = 0;
    for (int b = 0; b < B; b++) {
        if (call->chunk_lens[b] <= 0) continue;
        pl_req *r = e->cur[b];
        int ctx = ctx_len(e, r, l);
        e->bt[c] = c;
        e->ctx_lens[c] = ctx;
        char *dk = sk + (size_t)c * H * S * row, *dv = sv + (size_t)c * H * S * row;
        if (e->cfg.kv_mode == PL_KV_DENSE) {
            for (int h = 0; h < H; h++) {
                memcpy(dk + (size_t)h * S * row, (const char *)r->dense[l].k + (size_t)h * ctx * row, (size_t)ctx * row);
                memcpy(dv + (size_t)h * S * row, (const char *)r->dense[l].v + (size_t)h * ctx * row, (size_t)ctx * row);
            }
        } else {
            gather_pages(e, &r->kv.layers[l], H, D, S, dk, dv);
        }
        e->m.dense_staging_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        copy_q(e, call, call->row_start[b], 1, (char *)e->qbuf + (size_t)c * qw);
        c++;
    }
    int rc = attention(e, call, rows, 1, S, e->qbuf, sk, sv, e->bt, e->ctx_lens, e->obuf, err, err_len);
    if (rc != PL_OK) return rc;
    c = 0;
    for (int b = 0; b < B; b++)
        if (call->chunk_lens[b] > 0) {
            memcpy((char *)call->out + (size_t)call->row_start[b] * qw, (char *)e->obuf + (size_t)c * qw, qw);
            c++;
        }
    return PL_OK;
}

int pl_eng_attend(void *ctx, const pl_attend_call *call, char *err, size_t err_len) {
    pl_engine *e = ctx;
    if (call->dtype != e->dtype)
        return pl_fail(err, err_len, PL_ERR_INVALID, "attend: dtype %d differs from the engine's %d", (int)call->dtype,
                       (int)e->dtype);
    for (int i = 0; i < call->num_seqs; i++) {
        if (call->chunk_lens[i] <= 0) continue;
        int rc = store(e, call, i, err, err_len);
        if (rc != PL_OK) return rc;
    }
    if (e->phase_decode) return attend_decode(e, call, err, err_len);
    for (int i = 0; i < call->num_seqs; i++) {
        if (call->chunk_lens[i] <= 0) continue;
        int rc = attend_one(e, call, i, err, err_len);
        if (rc != PL_OK) return rc;
    }
    return PL_OK;
}
