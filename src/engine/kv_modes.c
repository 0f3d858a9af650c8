/* The two comparison KV modes of spec 5.2, supplied to the model through pl_attend_ops:
 *   dense        - the week-2 path: a per-request concatenating dense cache per layer (every
 *                  append allocates the longer cache and copies the old one); decode rebuilds
 *                  a right-aligned padded batch [rows, H_kv, S_max, D] and an additive mask
 *                  [rows, 1, S_max] every layer every step; attention is always the readable
 *                  FP32 grouped attention (the fused kernel is not used with array masks);
 *   paged-gather - the page pools are the storage; every call gathers the request's pages
 *                  back to dense K/V (decode: into the padded batch); the fused decode
 *                  operator when L <= 8 and S <= 256 (left-aligned, context lengths), else
 *                  the same readable attention with right-aligned padding and a mask.
 * On a CUDA model (e->kvc set) the same logic runs on device memory through
 * src/cuda/kv_modes_cuda.h: dense caches and padded batches in device memory, the copies and
 * a readable f32 attention kernel on the backend's stream, the fused operator through the
 * backend's paged_attention op; every byte counter counts the same things as on the CPU. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/bf16.h"

#include "cuda/backend_cuda.h"
#include "cuda/kv_modes_cuda.h"
#include "engine/engine_internal.h"
#include "model/model_internal.h"

static void *grow(void **buf, size_t *cap, size_t bytes) {
    if (*cap >= bytes && *buf) return *buf;
    size_t n = bytes < 64 ? 64 : bytes;
    if (n < *cap + *cap / 2) n = *cap + *cap / 2; /* geometric: contexts grow a token at a time */
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
    /* a CUDA model's activations (and the pools of paged-gather) are device memory */
    if (pl_model_get_options(e->model)->device == PL_DEVICE_CUDA && e->cfg.kv_mode != PL_KV_PAGED)
        return pl_kvc_create(pl_cuda_backend_stream(e->model->bctx), &e->kvc, err, err_len);
    return PL_OK;
}

void pl_eng_stage_drop(pl_engine *e) {
    if (!e->stage_k) return;
    for (int l = 0; l < e->mc.num_layers; l++) {
        if (e->kvc) {
            pl_kvc_free(e->kvc, e->stage_k[l]);
            pl_kvc_free(e->kvc, e->stage_v[l]);
        } else {
            free(e->stage_k[l]);
            free(e->stage_v[l]);
        }
        e->stage_k[l] = e->stage_v[l] = NULL;
        e->stage_cap[l] = e->stage_bytes[l] = 0;
    }
}

void pl_eng_modes_free(pl_engine *e) {
    pl_eng_stage_drop(e);
    pl_kvc_destroy(e->kvc); /* after every dense cache (requests go first) and the stage buffers */
    e->kvc = NULL;
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
    free(e->rq);
    free(e->rmask);
    free(e->rout);
    free(e->rscores);
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
        if (e->kvc) {
            pl_kvc_free(e->kvc, r->dense[l].k);
            pl_kvc_free(e->kvc, r->dense[l].v);
        } else {
            free(r->dense[l].k);
            free(r->dense[l].v);
        }
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

/* Copies a paged cache into head-major dense rows with head stride S tokens, the first
 * token at position pad (0: left-aligned; S - offset: right-aligned). */
static void gather_pages(const pl_engine *e, const pl_seq_cache *c, int H, int D, int S, int pad, char *k_out,
                         char *v_out) {
    const size_t row = (size_t)D * e->elem;
    const int ps = e->cfg.page_size;
    const char *kp = pl_page_pool_keys(c->pool), *vp = pl_page_pool_values(c->pool);
    int tok = 0;
    for (int p = 0; p < c->num_pages && tok < c->offset; p++) {
        int n = c->page_lens[p];
        if (n > c->offset - tok) n = c->offset - tok;
        for (int h = 0; h < H; h++) {
            size_t src = (((size_t)c->page_ids[p] * H + h) * ps) * row;
            size_t dst = ((size_t)h * S + pad + tok) * row;
            memcpy(k_out + dst, kp + src, (size_t)n * row);
            memcpy(v_out + dst, vp + src, (size_t)n * row);
        }
        tok += n;
    }
}

/* The fused operator on dense buffers: each batch row is one left-aligned page of S tokens. */
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
    /* CUDA: the backend's op uploads the host block table and context lengths */
    if (e->kvc) return e->model->ops->paged_attention(e->model->bctx, &a, err, err_len);
    return pl_paged_attention(&a, err, err_len);
}

/* ---- readable FP32 grouped attention (the week-2 algorithm) ----
 * Grouped as the week-2 code reshapes it: the rep = Hq / Hkv query heads of KV head g and
 * all L queries form the rows of one [rep * L, D] block against that head's [S, D] keys.
 * For every row: scores[s] = q . k[s] * scale + mask[b, l, s] over all S keys of the padded
 * batch (padding included, masked with -inf), softmax in f32, then out = sum_s p[s] v[s].
 * Rows go in blocks of up to RB so each key / value row is read once per block (what the
 * matmul of the week-2 code does). Plain loops the compiler vectorizes, compiled for
 * AVX-512 / AVX2 and generic, picked at run time. */
#define RB 8
typedef struct readable_args {
    int rows, L, S, Hq, Hkv, D;
    float scale;
    const float *q;    /* [rows, L, Hq, D] */
    const void *k;     /* [rows, Hkv, S, D], f32 or bf16 (widened to f32 as it is read) */
    const void *v;     /* [rows, Hkv, S, D] */
    int kv_bf16;
    const float *mask; /* [rows, L, S]: 0 or -inf */
    float *out;        /* [rows, L, Hq, D] */
    float *scores;     /* [threads, RB, S] */
} readable_args;

/* a * b + c: fused when the variant's ISA has FMA (fma is a constant after inlining; ISO C
 * mode does not contract a * b + c by itself). */
#define MADD(fma, a, b, c) ((fma) ? fmaf((a), (b), (c)) : (a) * (b) + (c))

/* q[0..3] . k for one key row: four dot products in one pass. */
static inline __attribute__((always_inline)) void dot4_f32(const float *const *q, const float *k, int D, float *out,
                                                          int fma) {
    const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
    for (int d = 0; d < D; d++) {
        const float kd = k[d];
        a0 = MADD(fma, q0[d], kd, a0);
        a1 = MADD(fma, q1[d], kd, a1);
        a2 = MADD(fma, q2[d], kd, a2);
        a3 = MADD(fma, q3[d], kd, a3);
    }
    out[0] = a0, out[1] = a1, out[2] = a2, out[3] = a3;
}

static inline __attribute__((always_inline)) void dot4_bf16(const float *const *q, const uint16_t *k, int D,
                                                           float *out, int fma) {
    const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
#pragma omp simd reduction(+ : a0, a1, a2, a3)
    for (int d = 0; d < D; d++) {
        const float kd = pl_bf16_to_f32(k[d]);
        a0 = MADD(fma, q0[d], kd, a0);
        a1 = MADD(fma, q1[d], kd, a1);
        a2 = MADD(fma, q2[d], kd, a2);
        a3 = MADD(fma, q3[d], kd, a3);
    }
    out[0] = a0, out[1] = a1, out[2] = a2, out[3] = a3;
}

/* One task: rows [i0, i0 + RB) of the group of KV head g in batch row b. */
static inline __attribute__((always_inline)) void readable_task(const readable_args *a, int t, float *sc, int fma) {
    const int L = a->L, S = a->S, Hq = a->Hq, Hkv = a->Hkv, D = a->D, rep = Hq / Hkv;
    const int grp = rep * L, blocks = (grp + RB - 1) / RB;
    const int b = t / (Hkv * blocks), g = (t / blocks) % Hkv, i0 = (t % blocks) * RB;
    const int nr = grp - i0 < RB ? grp - i0 : RB;
    const size_t kv0 = ((size_t)b * Hkv + g) * (size_t)S * D;
    const float *kf = (const float *)a->k + kv0, *vf = (const float *)a->v + kv0;
    const uint16_t *kh = (const uint16_t *)a->k + kv0, *vh = (const uint16_t *)a->v + kv0;
    const float *q[RB], *m[RB];
    float *o[RB];
    for (int r = 0; r < nr; r++) { /* row i = l * rep + j: query l, head g * rep + j */
        const int l = (i0 + r) / rep, h = g * rep + (i0 + r) % rep;
        q[r] = a->q + (((size_t)b * L + l) * Hq + h) * D;
        o[r] = a->out + (((size_t)b * L + l) * Hq + h) * D;
        m[r] = a->mask + ((size_t)b * L + l) * S;
    }
    for (int s = 0; s < S; s++) {
        const float *ks = kf + (size_t)s * D;
        const uint16_t *ksh = kh + (size_t)s * D;
        float dots[RB];
        int r = 0;
        for (; r + 4 <= nr; r += 4) /* four rows per pass: independent sums, one key load */
            if (a->kv_bf16)
                dot4_bf16(q + r, ksh, D, dots + r, fma);
            else
                dot4_f32(q + r, ks, D, dots + r, fma);
        for (; r < nr; r++) {
            const float *qr = q[r];
            float acc = 0.0f;
            if (a->kv_bf16) {
#pragma omp simd reduction(+ : acc)
                for (int d = 0; d < D; d++) acc = MADD(fma, qr[d], pl_bf16_to_f32(ksh[d]), acc);
            } else {
#pragma omp simd reduction(+ : acc)
                for (int d = 0; d < D; d++) acc = MADD(fma, qr[d], ks[d], acc);
            }
            dots[r] = acc;
        }
        for (r = 0; r < nr; r++) sc[(size_t)r * S + s] = dots[r] * a->scale + m[r][s];
    }
    for (int r = 0; r < nr; r++) {
        float *row = sc + (size_t)r * S, mx = -INFINITY, sum = 0.0f;
        for (int s = 0; s < S; s++) mx = row[s] > mx ? row[s] : mx;
        for (int s = 0; s < S; s++) {
            row[s] = expf(row[s] - mx); /* masked keys: exp(-inf) = 0 */
            sum += row[s];
        }
        const float inv = 1.0f / sum;
        for (int s = 0; s < S; s++) row[s] *= inv;
        for (int d = 0; d < D; d++) o[r][d] = 0.0f;
    }
    for (int s = 0; s < S; s++) {
        const float *vs = vf + (size_t)s * D;
        const uint16_t *vsh = vh + (size_t)s * D;
        for (int r = 0; r < nr; r++) {
            const float p = sc[(size_t)r * S + s];
            float *orow = o[r];
            if (a->kv_bf16) {
#pragma omp simd
                for (int d = 0; d < D; d++) orow[d] = MADD(fma, p, pl_bf16_to_f32(vsh[d]), orow[d]);
            } else {
#pragma omp simd
                for (int d = 0; d < D; d++) orow[d] = MADD(fma, p, vs[d], orow[d]);
            }
        }
    }
}

typedef void (*readable_task_fn)(const readable_args *a, int t, float *sc);
__attribute__((target("avx512f,avx512vl,avx2,fma"))) static void readable_task_avx512(const readable_args *a, int t,
                                                                                      float *sc) {
    readable_task(a, t, sc, 1);
}
__attribute__((target("avx2,fma"))) static void readable_task_avx2(const readable_args *a, int t, float *sc) {
    readable_task(a, t, sc, 1);
}
static void readable_task_generic(const readable_args *a, int t, float *sc) { readable_task(a, t, sc, 0); }

/* The parallel loop stays outside the target-specific code: GCC outlines an OpenMP region
 * into a function without the caller's target attributes. */
static void readable_attention(const readable_args *a) {
    readable_task_fn fn = readable_task_generic;
    if (__builtin_cpu_supports("avx512f"))
        fn = readable_task_avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        fn = readable_task_avx2;
    const int blocks = (a->Hq / a->Hkv * a->L + RB - 1) / RB, tasks = a->rows * a->Hkv * blocks;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < tasks; t++) fn(a, t, a->scores + (size_t)omp_get_thread_num() * RB * (size_t)a->S);
}

/* Engine-dtype elements to f32 (bf16 widening is exact). */
static void widen(const pl_engine *e, const void *src, float *dst, size_t n) {
    if (e->dtype == PL_F32)
        memcpy(dst, src, n * sizeof(float));
    else
        pl_bf16_to_f32_array(dst, src, n);
}

static void narrow(const pl_engine *e, const float *src, void *dst, size_t n) {
    if (e->dtype == PL_F32)
        memcpy(dst, src, n * sizeof(float));
    else
        pl_bf16_from_f32_array(dst, src, n);
}

/* Scratch for a readable call of rows x L queries over S keys. */
static int readable_scratch(pl_engine *e, const pl_attend_call *call, int rows, int L, int S, char *err,
                            size_t err_len) {
    const size_t qn = (size_t)rows * L * call->num_heads * call->head_dim;
    const size_t th = (size_t)omp_get_max_threads();
    if (!grow((void **)&e->rq, &e->rq_cap, qn * sizeof(float)) || !grow((void **)&e->rout, &e->rout_cap, qn * sizeof(float)) ||
        !grow((void **)&e->rmask, &e->rmask_cap, (size_t)rows * L * S * sizeof(float)) ||
        !grow((void **)&e->rscores, &e->rscores_cap, th * RB * (size_t)S * sizeof(float)))
        return pl_fail(err, err_len, PL_ERR_NOMEM, "readable attention: out of memory (rows %d, L %d, S %d)", rows, L,
                       S);
    return PL_OK;
}

static readable_args readable_setup(const pl_engine *e, const pl_attend_call *call, int rows, int L, int S,
                                    const void *k, const void *v) {
    readable_args a = {rows, L, S, call->num_heads, call->num_kv_heads, call->head_dim,
                       call->scale > 0 ? call->scale : 1.0f / sqrtf((float)call->head_dim),
                       e->rq, k, v, e->dtype == PL_BF16, e->rmask, e->rout, e->rscores};
    return a;
}

/* Query rows into a contiguous [rows, H, D] buffer (q may share a strided qkv buffer). */
static void copy_q(const pl_engine *e, const pl_attend_call *call, int src_row, int n, char *dst) {
    size_t w = (size_t)call->num_heads * call->head_dim * e->elem;
    for (int t = 0; t < n; t++)
        memcpy(dst + (size_t)t * w, (const char *)call->q + (size_t)(src_row + t) * call->qkv_token_stride * e->elem, w);
}

/* Query rows widened to f32 [n, Hq, D] at dst. */
static void widen_q(const pl_engine *e, const pl_attend_call *call, int src_row, int n, float *dst) {
    size_t w = (size_t)call->num_heads * call->head_dim;
    for (int t = 0; t < n; t++)
        widen(e, (const char *)call->q + (size_t)(src_row + t) * call->qkv_token_stride * e->elem, dst + (size_t)t * w,
              w);
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

/* The seed's choice for paged-gather: the week-2 fused decode kernel for short queries over
 * short contexts, the readable attention otherwise; dense never uses the kernel. */
static int use_fused(const pl_engine *e, int L, int S) {
    return e->cfg.kv_mode == PL_KV_PAGED_GATHER && L <= 8 && S <= 256;
}

/* One sequence's chunk (prefill): attention over its whole cache (no padding). */
static int attend_one(pl_engine *e, const pl_attend_call *call, int i, char *err, size_t err_len) {
    pl_req *r = e->cur[i];
    const int H = call->num_kv_heads, D = call->head_dim, Hq = call->num_heads, n = call->chunk_lens[i],
              l = call->layer;
    int ctx = ctx_len(e, r, l);
    const void *k, *v;
    if (e->cfg.kv_mode == PL_KV_DENSE) {
        k = r->dense[l].k;
        v = r->dense[l].v;
    } else {
        size_t bytes = (size_t)H * ctx * D * e->elem;
        if (!grow(&e->gk, &e->g_cap, bytes) || !grow(&e->gv, &e->gv_cap, bytes))
            return pl_fail(err, err_len, PL_ERR_NOMEM, "gather: out of memory");
        gather_pages(e, &r->kv.layers[l], H, D, ctx, 0, e->gk, e->gv);
        e->m.gather_prefill_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        k = e->gk;
        v = e->gv;
    }
    void *out = (char *)call->out + (size_t)call->row_start[i] * Hq * D * e->elem;
    if (use_fused(e, n, ctx)) {
        const void *q = (const char *)call->q + (size_t)call->row_start[i] * call->qkv_token_stride * e->elem;
        if (call->qkv_token_stride != (size_t)Hq * D) {
            size_t bytes = (size_t)n * Hq * D * e->elem;
            if (!grow(&e->qbuf, &e->qbuf_cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "attend: out of memory");
            copy_q(e, call, call->row_start[i], n, e->qbuf);
            q = e->qbuf;
        }
        int32_t bt = 0, c = ctx;
        return attention(e, call, 1, n, ctx, q, k, v, &bt, &c, out, err, err_len);
    }
    int rc = readable_scratch(e, call, 1, n, ctx, err, err_len);
    if (rc != PL_OK) return rc;
    widen_q(e, call, call->row_start[i], n, e->rq);
    /* causal mask [n, ctx]: query j sits at position ctx - n + j */
    for (int j = 0; j < n; j++) {
        float *m = e->rmask + (size_t)j * ctx;
        const int last = ctx - n + j;
        for (int s = 0; s < ctx; s++) m[s] = s <= last ? 0.0f : -INFINITY;
    }
    readable_args a = readable_setup(e, call, 1, n, ctx, k, v);
    readable_attention(&a);
    narrow(e, e->rout, out, (size_t)n * Hq * D);
    return PL_OK;
}

/* Decode: every row one token; rebuild the padded dense batch [rows, H, S_max, D] of this
 * layer over the occupied slots (empty slots are left out rather than padded: the one
 * liberty taken with the week-2 batch, which pads all B slots). Readable attention:
 * right-aligned rows (zero padding on the left) and the additive mask [rows, 1, S_max];
 * the fused kernel (gather, S_max <= 256): left-aligned rows and context lengths. */
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
    const int fused = use_fused(e, 1, S);
    size_t bytes = (size_t)rows * H * S * row;
    size_t cap = e->stage_cap[l];
    if (!grow(&e->stage_k[l], &cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "dense batch: out of memory");
    cap = e->stage_cap[l];
    if (!grow(&e->stage_v[l], &cap, bytes)) return pl_fail(err, err_len, PL_ERR_NOMEM, "dense batch: out of memory");
    e->stage_cap[l] = cap;
    e->stage_bytes[l] = 2 * bytes;
    char *sk = e->stage_k[l], *sv = e->stage_v[l];
    size_t qw = (size_t)Hq * row;
    if (fused) {
        if (!grow(&e->qbuf, &e->qbuf_cap, (size_t)rows * qw) || !grow(&e->obuf, &e->obuf_cap, (size_t)rows * qw))
            return pl_fail(err, err_len, PL_ERR_NOMEM, "attend: out of memory");
    } else {
        int rc = readable_scratch(e, call, rows, 1, S, err, err_len);
        if (rc != PL_OK) return rc;
    }
    int c = 0;
    for (int b = 0; b < B; b++) {
        if (call->chunk_lens[b] <= 0) continue;
        pl_req *r = e->cur[b];
        const int ctx = ctx_len(e, r, l), pad = fused ? 0 : S - ctx;
        char *dk = sk + (size_t)c * H * S * row, *dv = sv + (size_t)c * H * S * row;
        if (pad)
            for (int h = 0; h < H; h++) {
                memset(dk + (size_t)h * S * row, 0, (size_t)pad * row);
                memset(dv + (size_t)h * S * row, 0, (size_t)pad * row);
            }
        if (e->cfg.kv_mode == PL_KV_DENSE) {
            for (int h = 0; h < H; h++) {
                memcpy(dk + ((size_t)h * S + pad) * row, (const char *)r->dense[l].k + (size_t)h * ctx * row,
                       (size_t)ctx * row);
                memcpy(dv + ((size_t)h * S + pad) * row, (const char *)r->dense[l].v + (size_t)h * ctx * row,
                       (size_t)ctx * row);
            }
        } else {
            gather_pages(e, &r->kv.layers[l], H, D, S, pad, dk, dv);
        }
        e->m.dense_staging_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        if (fused) {
            e->bt[c] = c;
            e->ctx_lens[c] = ctx;
            copy_q(e, call, call->row_start[b], 1, (char *)e->qbuf + (size_t)c * qw);
        } else {
            float *m = e->rmask + (size_t)c * S;
            for (int s = 0; s < S; s++) m[s] = s < pad ? -INFINITY : 0.0f;
            widen_q(e, call, call->row_start[b], 1, e->rq + (size_t)c * Hq * D);
        }
        c++;
    }
    if (fused) {
        int rc = attention(e, call, rows, 1, S, e->qbuf, sk, sv, e->bt, e->ctx_lens, e->obuf, err, err_len);
        if (rc != PL_OK) return rc;
    } else {
        readable_args a = readable_setup(e, call, rows, 1, S, sk, sv);
        readable_attention(&a);
    }
    c = 0;
    for (int b = 0; b < B; b++)
        if (call->chunk_lens[b] > 0) {
            char *dst = (char *)call->out + (size_t)call->row_start[b] * qw;
            if (fused)
                memcpy(dst, (char *)e->obuf + (size_t)c * qw, qw);
            else
                narrow(e, e->rout + (size_t)c * Hq * D, dst, (size_t)Hq * D);
            c++;
        }
    return PL_OK;
}

/* ---- the same modes on a CUDA model ----
 * q, k, v and out of the call are device memory; so are the dense caches, the padded batches
 * (stage_k / stage_v), the gathered prefill K/V and the masks. Same layouts, same choices
 * (use_fused, padding, masks) and the same counters as the host code above. */

static int dev_grow(pl_engine *e, void **buf, size_t *cap, size_t bytes, char *err, size_t err_len) {
    if (*cap >= bytes && *buf) return PL_OK;
    size_t n = bytes < 64 ? 64 : bytes;
    if (n < *cap + *cap / 2) n = *cap + *cap / 2; /* geometric, as grow() */
    n = (n + 63) & ~(size_t)63;
    void *p = NULL;
    int rc = pl_kvc_alloc(e->kvc, n, &p, err, err_len);
    if (rc != PL_OK) return rc;
    pl_kvc_free(e->kvc, *buf); /* stream-ordered: earlier work may still read it */
    *buf = p;
    *cap = n;
    return PL_OK;
}

/* dense_append on the device: new [H, len + n, D] buffers, old rows and the new rows copied
 * by one kernel; the same growth bytes counted. */
static int cu_dense_append(pl_engine *e, pl_dense_cache *c, const pl_attend_call *call, int row0, int n, char *err,
                           size_t err_len) {
    const int H = call->num_kv_heads, D = call->head_dim;
    const size_t es = e->elem, row = (size_t)D * es;
    const int old = c->len, len = old + n;
    const size_t bytes = (size_t)H * (size_t)len * row;
    void *k = NULL, *v = NULL;
    int rc = pl_kvc_alloc(e->kvc, bytes, &k, err, err_len);
    if (rc == PL_OK) rc = pl_kvc_alloc(e->kvc, bytes, &v, err, err_len);
    const size_t src = (size_t)row0 * call->qkv_token_stride * es;
    if (rc == PL_OK)
        rc = pl_kvc_dense_append(e->kvc, es, H, D, old, n, c->k, c->v, (const char *)call->k + src,
                                 (const char *)call->v + src, call->qkv_token_stride, k, v, err, err_len);
    if (rc != PL_OK) {
        pl_kvc_free(e->kvc, k);
        pl_kvc_free(e->kvc, v);
        return rc;
    }
    e->m.dense_growth_copy_bytes += (int64_t)old * (int64_t)e->token_bytes;
    pl_kvc_free(e->kvc, c->k);
    pl_kvc_free(e->kvc, c->v);
    c->k = k;
    c->v = v;
    c->len = len;
    return PL_OK;
}

/* store() of paged-gather on the device: every sequence's pages reserved (normally already
 * done by the scheduler), then one launch writes all rows of the call into their page slots,
 * then the caches commit. The pool of a layer is shared by every request. */
static int cu_store_pages(pl_engine *e, const pl_attend_call *call, char *err, size_t err_len) {
    int total = 0;
    for (int i = 0; i < call->num_seqs; i++)
        if (call->chunk_lens[i] > 0 && call->row_start[i] + call->chunk_lens[i] > total)
            total = call->row_start[i] + call->chunk_lens[i];
    if (!total) return PL_OK;
    int32_t *ids = malloc(sizeof(int32_t) * 2 * (size_t)total);
    if (!ids) return pl_fail(err, err_len, PL_ERR_NOMEM, "attend: out of memory");
    int32_t *slots = ids + total;
    for (int t = 0; t < total; t++) ids[t] = -1, slots[t] = 0; /* rows of no sequence: skipped */
    pl_page_pool *pool = NULL;
    int rc = PL_OK;
    for (int i = 0; i < call->num_seqs && rc == PL_OK; i++) {
        const int n = call->chunk_lens[i];
        if (n <= 0) continue;
        pl_seq_cache *c = &e->cur[i]->kv.layers[call->layer];
        if (pool && c->pool != pool) {
            rc = pl_fail(err, err_len, PL_ERR_INTERNAL, "attend: sequences of layer %d on different pools", call->layer);
            break;
        }
        pool = c->pool;
        if ((rc = pl_seq_cache_reserve(c, n, err, err_len)) != PL_OK) break;
        const int ps = pl_page_pool_get_config(pool)->page_size;
        for (int t = 0; t < n; t++) {
            const int pos = c->offset + t;
            ids[call->row_start[i] + t] = c->page_ids[pos / ps];
            slots[call->row_start[i] + t] = pos % ps;
        }
    }
    if (rc == PL_OK) {
        pl_page_pool_stats st; /* after every reservation: storage may have grown */
        pl_page_pool_get_stats(pool, &st);
        rc = pl_kvc_page_append(e->kvc, e->dtype, total, call->num_kv_heads, call->head_dim,
                                pl_page_pool_get_config(pool)->page_size, st.capacity_pages, call->k, call->v,
                                call->qkv_token_stride, ids, slots, pl_page_pool_keys(pool), pl_page_pool_values(pool),
                                err, err_len);
    }
    free(ids);
    for (int i = 0; i < call->num_seqs && rc == PL_OK; i++)
        if (call->chunk_lens[i] > 0)
            rc = pl_seq_cache_commit(&e->cur[i]->kv.layers[call->layer], call->chunk_lens[i], err, err_len);
    return rc;
}

/* attend_one on the device. */
static int cu_attend_one(pl_engine *e, const pl_attend_call *call, int i, char *err, size_t err_len) {
    pl_req *r = e->cur[i];
    const int H = call->num_kv_heads, D = call->head_dim, Hq = call->num_heads, n = call->chunk_lens[i],
              l = call->layer;
    const int ctx = ctx_len(e, r, l);
    const size_t es = e->elem;
    const void *k, *v;
    int rc;
    if (e->cfg.kv_mode == PL_KV_DENSE) {
        k = r->dense[l].k;
        v = r->dense[l].v;
    } else {
        const size_t bytes = (size_t)H * ctx * D * es;
        const pl_seq_cache *c = &r->kv.layers[l];
        void *gk = NULL, *gv = NULL;
        pl_kvc_stage_row row = {NULL, NULL, c->page_ids, ctx, 0};
        if ((rc = pl_kvc_scratch(e->kvc, PL_KVC_GATHER_K, bytes, &gk, err, err_len)) != PL_OK ||
            (rc = pl_kvc_scratch(e->kvc, PL_KVC_GATHER_V, bytes, &gv, err, err_len)) != PL_OK ||
            (rc = pl_kvc_stage(e->kvc, es, 1, H, D, ctx, &row, pl_page_pool_keys(c->pool), pl_page_pool_values(c->pool),
                               pl_page_pool_get_config(c->pool)->page_size, gk, gv, NULL, err, err_len)) != PL_OK)
            return rc;
        e->m.gather_prefill_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        k = gk;
        v = gv;
    }
    const char *q = (const char *)call->q + (size_t)call->row_start[i] * call->qkv_token_stride * es;
    void *out = (char *)call->out + (size_t)call->row_start[i] * Hq * D * es;
    if (use_fused(e, n, ctx)) {
        const size_t w = (size_t)Hq * D * es;
        void *qb = NULL;
        if ((rc = pl_kvc_scratch(e->kvc, PL_KVC_QUERY, (size_t)n * w, &qb, err, err_len)) != PL_OK ||
            (rc = pl_kvc_copy_rows(e->kvc, qb, w, q, call->qkv_token_stride * es, w, n, err, err_len)) != PL_OK)
            return rc;
        int32_t bt = 0, c = ctx;
        return attention(e, call, 1, n, ctx, qb, k, v, &bt, &c, out, err, err_len);
    }
    void *mask = NULL;
    if ((rc = pl_kvc_scratch(e->kvc, PL_KVC_MASK, (size_t)n * ctx * sizeof(float), &mask, err, err_len)) != PL_OK ||
        (rc = pl_kvc_causal_mask(e->kvc, n, ctx, mask, err, err_len)) != PL_OK)
        return rc;
    return pl_kvc_attention(e->kvc, e->dtype, 1, n, ctx, Hq, H, D, call->scale, q, call->qkv_token_stride, k, v, mask,
                            out, err, err_len);
}

/* attend_decode on the device: the padded batch [rows, H, S_max, D] of the occupied slots
 * rebuilt by one staging launch per layer (right-aligned with its mask for the readable
 * attention, left-aligned for the fused operator). A decode call's rows are its occupied
 * slots in order, one token each (row_start of the c-th occupied slot is c). */
static int cu_attend_decode(pl_engine *e, const pl_attend_call *call, char *err, size_t err_len) {
    const int B = call->num_seqs, H = call->num_kv_heads, D = call->head_dim, Hq = call->num_heads, l = call->layer;
    const size_t es = e->elem, row = (size_t)D * es, qw = (size_t)Hq * row;
    int S = 1, rows = 0;
    for (int i = 0; i < B; i++)
        if (call->chunk_lens[i] > 0) {
            if (call->chunk_lens[i] != 1 || call->row_start[i] != rows)
                return pl_fail(err, err_len, PL_ERR_INTERNAL, "decode: slot %d has %d rows at row %d", i,
                               call->chunk_lens[i], call->row_start[i]);
            rows++;
            if (ctx_len(e, e->cur[i], l) > S) S = ctx_len(e, e->cur[i], l);
        }
    if (!rows) return PL_OK;
    const int fused = use_fused(e, 1, S);
    const size_t bytes = (size_t)rows * H * S * row;
    size_t cap = e->stage_cap[l];
    int rc = dev_grow(e, &e->stage_k[l], &cap, bytes, err, err_len);
    if (rc != PL_OK) return rc;
    cap = e->stage_cap[l];
    if ((rc = dev_grow(e, &e->stage_v[l], &cap, bytes, err, err_len)) != PL_OK) return rc;
    e->stage_cap[l] = cap;
    e->stage_bytes[l] = 2 * bytes;
    pl_kvc_stage_row *sr = malloc(sizeof *sr * (size_t)rows);
    if (!sr) return pl_fail(err, err_len, PL_ERR_NOMEM, "dense batch: out of memory");
    const pl_page_pool *pool = NULL;
    int c = 0;
    for (int b = 0; b < B; b++) {
        if (call->chunk_lens[b] <= 0) continue;
        pl_req *r = e->cur[b];
        const int ctx = ctx_len(e, r, l), pad = fused ? 0 : S - ctx;
        if (e->cfg.kv_mode == PL_KV_DENSE) {
            sr[c] = (pl_kvc_stage_row){r->dense[l].k, r->dense[l].v, NULL, ctx, pad};
        } else {
            sr[c] = (pl_kvc_stage_row){NULL, NULL, r->kv.layers[l].page_ids, ctx, pad};
            pool = r->kv.layers[l].pool;
        }
        e->m.dense_staging_copy_bytes += (int64_t)ctx * (int64_t)e->token_bytes;
        if (fused) {
            e->bt[c] = c;
            e->ctx_lens[c] = ctx;
        }
        c++;
    }
    void *mask = NULL;
    rc = fused ? PL_OK : pl_kvc_scratch(e->kvc, PL_KVC_MASK, (size_t)rows * S * sizeof(float), &mask, err, err_len);
    if (rc == PL_OK)
        rc = pl_kvc_stage(e->kvc, es, rows, H, D, S, sr, pool ? pl_page_pool_keys(pool) : NULL,
                          pool ? pl_page_pool_values(pool) : NULL, pool ? pl_page_pool_get_config(pool)->page_size : 0,
                          e->stage_k[l], e->stage_v[l], mask, err, err_len);
    free(sr);
    if (rc != PL_OK) return rc;
    if (fused) {
        void *qb = NULL;
        if ((rc = pl_kvc_scratch(e->kvc, PL_KVC_QUERY, (size_t)rows * qw, &qb, err, err_len)) != PL_OK ||
            (rc = pl_kvc_copy_rows(e->kvc, qb, qw, call->q, call->qkv_token_stride * es, qw, rows, err, err_len)) != PL_OK)
            return rc;
        return attention(e, call, rows, 1, S, qb, e->stage_k[l], e->stage_v[l], e->bt, e->ctx_lens, call->out, err,
                         err_len);
    }
    return pl_kvc_attention(e->kvc, e->dtype, rows, 1, S, Hq, H, D, call->scale, call->q, call->qkv_token_stride,
                            e->stage_k[l], e->stage_v[l], mask, call->out, err, err_len);
}

static int cu_attend(pl_engine *e, const pl_attend_call *call, char *err, size_t err_len) {
    int rc = PL_OK;
    if (e->cfg.kv_mode == PL_KV_DENSE) {
        for (int i = 0; i < call->num_seqs && rc == PL_OK; i++)
            if (call->chunk_lens[i] > 0)
                rc = cu_dense_append(e, &e->cur[i]->dense[call->layer], call, call->row_start[i], call->chunk_lens[i],
                                     err, err_len);
    } else {
        rc = cu_store_pages(e, call, err, err_len);
    }
    if (rc != PL_OK) return rc;
    if (e->phase_decode) return cu_attend_decode(e, call, err, err_len);
    for (int i = 0; i < call->num_seqs && rc == PL_OK; i++)
        if (call->chunk_lens[i] > 0) rc = cu_attend_one(e, call, i, err, err_len);
    return rc;
}

int pl_eng_attend(void *ctx, const pl_attend_call *call, char *err, size_t err_len) {
    pl_engine *e = ctx;
    if (call->dtype != e->dtype)
        return pl_fail(err, err_len, PL_ERR_INVALID, "attend: dtype %d differs from the engine's %d", (int)call->dtype,
                       (int)e->dtype);
    if (e->kvc) return cu_attend(e, call, err, err_len);
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
