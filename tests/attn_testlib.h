/* Shared helpers of the attention tests (CPU and CUDA): paged problems with NaN poisoning of
 * every byte attention must not read, and comparison against the REFERENCE schedule. */
#ifndef PL_ATTN_TESTLIB_H
#define PL_ATTN_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn/attn_internal.h"
#include "base/bf16.h"
#include "base/rng.h"
#include "pagellm/attention.h"

typedef struct at_problem {
    pl_paged_attention_args a;
    void *q, *k, *v, *out;
    int32_t *bt, *ctx;
    size_t q_elems, page_elems;
} at_problem;

static inline size_t at_esize(pl_dtype dt) { return dt == PL_F32 ? 4 : 2; }

static inline void at_set(void *base, pl_dtype dt, size_t i, float x) {
    if (dt == PL_F32) ((float *)base)[i] = x;
    else ((uint16_t *)base)[i] = pl_f32_to_bf16(x);
}

static inline float at_get(const void *base, pl_dtype dt, size_t i) {
    return dt == PL_F32 ? ((const float *)base)[i] : pl_bf16_to_f32(((const uint16_t *)base)[i]);
}

static inline void at_fill_nan(void *base, pl_dtype dt, size_t n) {
    for (size_t i = 0; i < n; i++) at_set(base, dt, i, NAN);
}

/* Builds a problem: physical page ids shuffled (non-consecutive), extra_pages unlisted
 * pages, extra_slots -1 entries past the longest row; everything attention must not read
 * (unused slots, unlisted pages, the query of inactive rows) is NaN, out is NaN. */
static inline void at_build(at_problem *p, pl_dtype dt, int batch, int hq, int hkv, int L, int D, int ps,
                            const int *ctx, int causal, int extra_pages, int extra_slots, uint64_t seed) {
    memset(p, 0, sizeof *p);
    pl_mt19937 rng;
    pl_mt_seed(&rng, seed);
    int live_total = 0, max_live = 0;
    for (int b = 0; b < batch; b++) {
        int live = (ctx[b] + ps - 1) / ps;
        live_total += live;
        if (live > max_live) max_live = live;
    }
    int P = live_total + extra_pages;
    if (P < 1) P = 1;
    int maxp = max_live + extra_slots;
    if (maxp < 1) maxp = 1;
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)P);
    for (int i = 0; i < P; i++) perm[i] = i;
    for (int i = P - 1; i > 0; i--) {
        int j = (int)pl_mt_randint(&rng, 0, i);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    p->q_elems = (size_t)batch * L * hq * D;
    p->page_elems = (size_t)P * hkv * ps * D;
    size_t es = at_esize(dt);
    p->q = malloc(p->q_elems * es);
    p->out = malloc(p->q_elems * es);
    p->k = malloc(p->page_elems * es);
    p->v = malloc(p->page_elems * es);
    p->bt = malloc(sizeof(int32_t) * (size_t)batch * maxp);
    p->ctx = malloc(sizeof(int32_t) * (size_t)batch);
    at_fill_nan(p->k, dt, p->page_elems);
    at_fill_nan(p->v, dt, p->page_elems);
    at_fill_nan(p->out, dt, p->q_elems);
    int next = 0;
    for (int b = 0; b < batch; b++) {
        p->ctx[b] = ctx[b];
        int live = (ctx[b] + ps - 1) / ps;
        for (int i = 0; i < maxp; i++) p->bt[(size_t)b * maxp + i] = i < live ? perm[next++] : -1;
        for (int s = 0; s < ctx[b]; s++) {
            int page = p->bt[(size_t)b * maxp + s / ps];
            for (int h = 0; h < hkv; h++)
                for (int d = 0; d < D; d++) {
                    size_t idx = (((size_t)page * hkv + h) * ps + s % ps) * D + d;
                    at_set(p->k, dt, idx, (float)pl_mt_normal(&rng));
                    at_set(p->v, dt, idx, (float)pl_mt_normal(&rng));
                }
        }
        for (size_t i = 0; i < (size_t)L * hq * D; i++)
            at_set(p->q, dt, (size_t)b * L * hq * D + i, ctx[b] > 0 ? (float)pl_mt_normal(&rng) : NAN);
    }
    free(perm);
    pl_paged_attention_args *a = &p->a;
    a->dtype = dt;
    a->batch = batch;
    a->num_heads = hq;
    a->num_kv_heads = hkv;
    a->query_len = L;
    a->head_dim = D;
    a->num_pages = P;
    a->page_size = ps;
    a->max_pages = maxp;
    a->scale = 0.0f;
    a->causal = causal;
    a->query = p->q;
    a->key_pages = p->k;
    a->value_pages = p->v;
    a->block_table = p->bt;
    a->context_lens = p->ctx;
    a->out = p->out;
    a->schedule = PL_ATTN_AUTO;
}

static inline void at_free(at_problem *p) {
    free(p->q), free(p->k), free(p->v), free(p->out), free(p->bt), free(p->ctx);
    memset(p, 0, sizeof *p);
}

/* Moves row b's live pages to the page ids given (one a live page, in table order); the
 * pages the row leaves become NaN. The ids must lie in [0, num_pages), be distinct and not
 * be listed by another row. */
static inline void at_move_pages(at_problem *p, int b, const int32_t *ids) {
    pl_dtype dt = p->a.dtype;
    size_t page = (size_t)p->a.num_kv_heads * p->a.page_size * p->a.head_dim, pb = page * at_esize(dt);
    int live = (p->ctx[b] + p->a.page_size - 1) / p->a.page_size;
    int32_t *row = p->bt + (size_t)b * p->a.max_pages;
    unsigned char *k = p->k, *v = p->v, *tk = malloc(pb * (size_t)live), *tv = malloc(pb * (size_t)live);
    for (int i = 0; i < live; i++) {
        memcpy(tk + pb * i, k + pb * row[i], pb);
        memcpy(tv + pb * i, v + pb * row[i], pb);
        at_fill_nan(k + pb * row[i], dt, page);
        at_fill_nan(v + pb * row[i], dt, page);
    }
    for (int i = 0; i < live; i++) {
        memcpy(k + pb * ids[i], tk + pb * i, pb);
        memcpy(v + pb * ids[i], tv + pb * i, pb);
        row[i] = ids[i];
    }
    free(tk), free(tv);
}

/* Runs schedule s at SIMD level lvl into a fresh NaN-filled buffer; returns the status. */
static inline int at_run(const at_problem *p, pl_attn_schedule s, int lvl, void *dst, char *err, size_t err_len) {
    pl_paged_attention_args a = p->a;
    a.schedule = s;
    a.out = dst;
    at_fill_nan(dst, a.dtype, p->q_elems);
    return pl_paged_attention_simd(&a, lvl, err, err_len);
}

/* The REFERENCE output as float (q_elems values, malloc'ed); NULL with err on failure. */
static inline float *at_reference_f32(const at_problem *p, char *err, size_t err_len) {
    void *out = malloc(p->q_elems * at_esize(p->a.dtype));
    float *r = NULL;
    if (at_run(p, PL_ATTN_REFERENCE, PL_SIMD_AUTO, out, err, err_len) == PL_OK) {
        r = malloc(p->q_elems * sizeof *r);
        for (size_t i = 0; i < p->q_elems; i++) r[i] = at_get(out, p->a.dtype, i);
    }
    free(out);
    return r;
}

/* Max abs error of got vs ref, and whether it is within tolerance: f32 1e-5 of the output
 * scale (max |ref|, at least 1e-3), bf16 atol = rtol = 2e-2. NaN counts as a failure. */
static inline int at_close(const at_problem *p, const void *got, const void *ref, double *max_err) {
    pl_dtype dt = p->a.dtype;
    double scale = 1e-3, worst = 0;
    for (size_t i = 0; i < p->q_elems; i++) {
        double r = fabs(at_get(ref, dt, i));
        if (r > scale) scale = r;
    }
    int ok = 1;
    for (size_t i = 0; i < p->q_elems; i++) {
        double g = at_get(got, dt, i), r = at_get(ref, dt, i), e = fabs(g - r);
        if (isnan(g) || isnan(r)) {
            ok = 0;
            e = INFINITY;
        } else if (dt == PL_F32 ? e > 1e-5 * scale : e > 2e-2 + 2e-2 * fabs(r)) {
            ok = 0;
        }
        if (e > worst) worst = e;
    }
    *max_err = worst;
    return ok;
}

#endif
