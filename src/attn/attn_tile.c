/* Pieces shared by the DECODE and FLASH schedules: query staging, the paged K/V tile sweep
 * with online softmax, and the final normalize-and-store. */
#include <string.h>

#include "attn/attn_internal.h"

void pl_attn_geom_init(pl_attn_geom *g, const pl_paged_attention_args *a) {
    g->a = a;
    g->group = a->num_heads / a->num_kv_heads;
    g->dp = (a->head_dim + PL_ATTN_PAD - 1) / PL_ATTN_PAD * PL_ATTN_PAD;
    g->qscale = (float)((double)pl_attn_scale(a) * PL_ATTN_LOG2E);
    g->esize = a->dtype == PL_F32 ? sizeof(float) : sizeof(uint16_t);
}

size_t pl_attn_work_floats(int dp, int max_rows) {
    return (size_t)PL_ATTN_BK * dp * 2 + (size_t)max_rows * (PL_ATTN_BK + 1) + 64;
}

void pl_attn_work_bind(pl_attn_work *w, float *mem, int dp, int max_rows, const float *zero) {
    w->kstage = mem;
    w->vstage = w->kstage + (size_t)PL_ATTN_BK * dp;
    w->s = w->vstage + (size_t)PL_ATTN_BK * dp;
    w->alpha = w->s + (size_t)max_rows * PL_ATTN_BK;
    w->zero = zero;
    /* padding columns and unused rows stay zero (finite) for the whole sweep */
    memset(mem, 0, sizeof(float) * (size_t)PL_ATTN_BK * dp * 2);
}

void pl_attn_stage_q(const pl_attn_geom *g, const pl_attn_kernels *k, int b, int kvh, int l0, int nl, float *qs,
                     int *lim) {
    const pl_paged_attention_args *a = g->a;
    const int D = a->head_dim, G = g->group, dp = g->dp;
    int ctx = a->context_lens[b];
    for (int l = l0; l < l0 + nl; l++) {
        for (int j = 0; j < G; j++) {
            int i = (l - l0) * G + j;
            float *dst = qs + (size_t)i * dp;
            size_t src = (((size_t)b * a->query_len + l) * a->num_heads + (size_t)kvh * G + j) * D;
            if (a->dtype == PL_F32) memcpy(dst, (const float *)a->query + src, sizeof(float) * (size_t)D);
            else k->bf16_to_f32(dst, (const uint16_t *)a->query + src, D);
            for (int d = 0; d < D; d++) dst[d] *= g->qscale;
            for (int d = D; d < dp; d++) dst[d] = 0.0f;
            lim[i] = pl_attn_visible(a, ctx, l);
        }
    }
}

void pl_attn_stage_q_bf16(const pl_attn_geom *g, int b, int kvh, int l0, int nl, uint16_t *q16) {
    const pl_paged_attention_args *a = g->a;
    const int D = a->head_dim, G = g->group;
    for (int l = l0; l < l0 + nl; l++) {
        size_t src = (((size_t)b * a->query_len + l) * a->num_heads + (size_t)kvh * G) * D;
        memcpy(q16 + (size_t)(l - l0) * G * D, (const uint16_t *)a->query + src, sizeof(uint16_t) * (size_t)G * D);
    }
}

/* Copies row src (element offset) of a page array into dst[0, D) as f32. */
static inline void load_row(const pl_attn_geom *g, const pl_attn_kernels *k, const void *pages, size_t off, float *dst) {
    if (g->a->dtype == PL_F32) memcpy(dst, (const float *)pages + off, sizeof(float) * (size_t)g->a->head_dim);
    else k->bf16_to_f32(dst, (const uint16_t *)pages + off, g->a->head_dim);
}

void pl_attn_sweep(const pl_attn_geom *g, const pl_attn_kernels *k, pl_attn_work *w, int b, int kvh, int k0, int k1,
                   const float *qs, int nrows, const int *lim, float *m, float *l, float *o, int use_kt) {
    const pl_paged_attention_args *a = g->a;
    const int D = a->head_dim, dp = g->dp, ps = a->page_size;
    const int32_t *bt = a->block_table + (size_t)b * a->max_pages;
    const size_t page_stride = (size_t)a->num_kv_heads * ps * D, head_off = (size_t)kvh * ps * D;
    const int direct = a->dtype == PL_F32 && D % PL_ATTN_PAD == 0;
    const int aligned = ps % PL_ATTN_BK == 0;
    size_t off[PL_ATTN_BK];
    const int raw16 = pl_attn_raw_bf16(a, k, use_kt);
    const uint16_t *q16 = (const uint16_t *)qs; /* raw16: the caller staged bf16 rows */
    int cached_lp = -1;
    size_t cached_base = 0;
    for (int t0 = k0; t0 < k1; t0 += PL_ATTN_BK) {
        int nk = k1 - t0 < PL_ATTN_BK ? k1 - t0 : PL_ATTN_BK;
        int nkp = (nk + 15) & ~15;
        if (aligned && t0 % PL_ATTN_BK == 0) {
            /* a tile inside one page: one block-table lookup */
            size_t base = (size_t)bt[t0 / ps] * page_stride + head_off + (size_t)(t0 % ps) * D;
            for (int j = 0; j < nk; j++) off[j] = base + (size_t)j * D;
        } else {
            /* a tile may cross pages: translate per key, reading each page id once */
            for (int j = 0; j < nk; j++) {
                int s = t0 + j, lp = s / ps;
                if (lp != cached_lp) {
                    cached_lp = lp;
                    cached_base = (size_t)bt[lp] * page_stride + head_off;
                }
                off[j] = cached_base + (size_t)(s - lp * ps) * D;
            }
        }
        /* Software prefetch: with shuffled page ids each page is a jump the hardware
         * prefetchers cannot follow. The in-place bf16 kernels prefetch the next tile's K (V)
         * rows spread between their dot products; a burst of a whole page's prefetches stalls
         * the core until the misses drain (measured, dev VM, one thread: the spread one-tile-
         * ahead form beat one page ahead, in a burst or spread). Other paths prefetch the next
         * page's rows of this head (up to 256) on entering a page. */
        const uint16_t *pfk = NULL, *pfv = NULL;
        int npf = 0;
        if (raw16 && !use_kt && aligned) {
            if (t0 + PL_ATTN_BK < k1) {
                int t1 = t0 + PL_ATTN_BK;
                npf = k1 - t1 < nk ? k1 - t1 : nk;
                size_t base = (size_t)bt[t1 / ps] * page_stride + head_off + (size_t)(t1 % ps) * D;
                pfk = (const uint16_t *)a->key_pages + base, pfv = (const uint16_t *)a->value_pages + base;
            }
        } else if (aligned && t0 % ps == 0 && t0 + ps < k1) {
            int t1 = t0 + ps, n1 = k1 - t1 < ps ? k1 - t1 : ps;
            if (n1 > 256) n1 = 256;
            size_t nb = (size_t)n1 * D * g->esize;
            size_t base = ((size_t)bt[t1 / ps] * page_stride + head_off) * g->esize;
            const char *kp = (const char *)a->key_pages + base, *vp = (const char *)a->value_pages + base;
            for (size_t c = 0; c < nb; c += 64) {
                __builtin_prefetch(kp + c);
                __builtin_prefetch(vp + c);
            }
        }
        if (raw16) {
            /* bf16 pages in place: no staging copies at all */
            const uint16_t *kb = a->key_pages, *vb = a->value_pages;
            for (int j = 0; j < nk; j++) w->krows16[j] = kb + off[j], w->vrows16[j] = vb + off[j];
            for (int j = nk; j < nkp; j++) w->krows16[j] = w->vrows16[j] = (const uint16_t *)w->zero;
            if (use_kt) {
                /* transpose 32-bit words (dim pairs) once per tile for the many-row kernel */
                uint32_t *kt = (uint32_t *)w->kstage;
                for (int j = 0; j < nkp; j++) {
                    const uint32_t *src = (const uint32_t *)w->krows16[j];
                    for (int wd = 0; wd < 64; wd++) kt[wd * PL_ATTN_BK + j] = src[wd];
                }
                k->qk_kt_bf16(q16, nrows, kt, nkp, g->qscale, w->s, PL_ATTN_BK);
            } else {
                k->qk_bf16(q16, nrows, w->krows16, nkp, g->qscale, w->s, PL_ATTN_BK, pfk, npf);
            }
            k->softmax(w->s, PL_ATTN_BK, nrows, nk, nkp, t0, lim, m, l, w->alpha);
            k->pv_bf16(w->s, PL_ATTN_BK, nrows, w->vrows16, nk, w->alpha, o, dp, pfv, npf);
            continue;
        }
        if (use_kt) {
            float *kt = w->kstage, *row = w->vstage; /* vstage doubles as a row buffer here */
            for (int j = 0; j < nk; j++) {
                const float *src;
                if (a->dtype == PL_F32) src = (const float *)a->key_pages + off[j];
                else {
                    k->bf16_to_f32(row, (const uint16_t *)a->key_pages + off[j], D);
                    src = row;
                }
                for (int d = 0; d < D; d++) kt[(size_t)d * PL_ATTN_BK + j] = src[d];
            }
            for (int j = nk; j < nkp; j++)
                for (int d = 0; d < D; d++) kt[(size_t)d * PL_ATTN_BK + j] = 0.0f;
            k->qk_kt(qs, dp, nrows, kt, nkp, dp, w->s, PL_ATTN_BK);
        } else {
            for (int j = 0; j < nk; j++) {
                if (direct) w->krows[j] = (const float *)a->key_pages + off[j];
                else {
                    float *dst = w->kstage + (size_t)j * dp;
                    load_row(g, k, a->key_pages, off[j], dst);
                    w->krows[j] = dst;
                }
            }
            for (int j = nk; j < nkp; j++) w->krows[j] = w->zero;
            k->qk_dot(qs, dp, nrows, w->krows, nkp, dp, w->s, PL_ATTN_BK);
        }
        k->softmax(w->s, PL_ATTN_BK, nrows, nk, nkp, t0, lim, m, l, w->alpha);
        for (int j = 0; j < nk; j++) {
            if (direct) w->vrows[j] = (const float *)a->value_pages + off[j];
            else {
                float *dst = w->vstage + (size_t)j * dp;
                load_row(g, k, a->value_pages, off[j], dst);
                w->vrows[j] = dst;
            }
        }
        k->pv(w->s, PL_ATTN_BK, nrows, w->vrows, nk, dp, w->alpha, o, dp);
    }
}

void pl_attn_store(const pl_attn_geom *g, int b, int kvh, int l0, int nl, const float *o, const float *l) {
    const pl_paged_attention_args *a = g->a;
    const int D = a->head_dim, G = g->group, dp = g->dp;
    for (int t = l0; t < l0 + nl; t++) {
        for (int j = 0; j < G; j++) {
            int i = (t - l0) * G + j;
            size_t dst = (((size_t)b * a->query_len + t) * a->num_heads + (size_t)kvh * G + j) * D;
            float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
            const float *src = o + (size_t)i * dp;
            if (a->dtype == PL_F32) {
                float *out = (float *)a->out + dst;
                for (int d = 0; d < D; d++) out[d] = src[d] * inv;
            } else {
                uint16_t *out = (uint16_t *)a->out + dst;
                for (int d = 0; d < D; d++) out[d] = pl_f32_to_bf16(src[d] * inv);
            }
        }
    }
}

void pl_attn_zero_inactive(const pl_paged_attention_args *a) {
    size_t row = (size_t)a->query_len * a->num_heads * a->head_dim * (a->dtype == PL_F32 ? 4 : 2);
    for (int b = 0; b < a->batch; b++)
        if (a->context_lens[b] == 0) memset((char *)a->out + row * (size_t)b, 0, row);
}
