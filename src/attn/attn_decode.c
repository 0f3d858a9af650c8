/* DECODE (query_len <= 8): flash-decoding. bf16 pages with head_dim 128 on AVX512_BF16 take
 * the fused kernel (decode_fused below: all KV heads of a row per sweep, whole pages per
 * split). Otherwise each (row, KV head) context is split into chunks
 * spread over OpenMP threads; the G query heads x L tokens that share a KV head are swept
 * together so each K/V byte is loaded once; partial (max, sum, out) states are merged after.
 * Page ids are read once per tile (a tile never crosses a page when page_size % 32 == 0).
 * bf16 with head_dim 128 (Qwen3) reads the pages in place with vdpbf16ps where the CPU has
 * AVX512_BF16; other shapes and levels widen a tile to f32 once (f32 pages with head_dim a
 * multiple of 16 are read in place). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "attn/attn_internal.h"

/* Merges the ns partial states of (b, kvh) (parts at item index first + sp * Hkv + kvh)
 * into oo / lo (thread scratch) and stores the row. */
static void merge_store(const pl_attn_geom *g, const float *parts, size_t part, int first, int ns, int Hkv, int b,
                        int kvh, int rows, float *mine) {
    const int dp = g->dp;
    float *lo = mine, *oo = lo + rows;
    for (int i = 0; i < rows; i++) {
        float mx = -INFINITY;
        for (int sp = 0; sp < ns; sp++) {
            const float *ps = parts + part * (size_t)(first + sp * Hkv + kvh);
            if (ps[i] > mx) mx = ps[i];
        }
        float lsum = 0.0f;
        float *dst = oo + (size_t)i * dp;
        for (int d = 0; d < dp; d++) dst[d] = 0.0f;
        if (mx != -INFINITY) {
            for (int sp = 0; sp < ns; sp++) {
                const float *ps = parts + part * (size_t)(first + sp * Hkv + kvh);
                if (ps[i] == -INFINITY) continue;
                float c = exp2f(ps[i] - mx);
                lsum += ps[rows + i] * c;
                const float *src = ps + 2 * (size_t)rows + (size_t)i * dp;
                for (int d = 0; d < dp; d++) dst[d] += c * src[d];
            }
        }
        lo[i] = lsum;
    }
    pl_attn_store(g, b, kvh, 0, g->a->query_len, oo, lo);
}

/* bf16 pages, head_dim 128, with a fused kernel: items are (row, context split, group of KV
 * heads); an item sweeps its pages once with all its heads inside each page, so K and V are
 * read as runs of (heads x page_size x 256 B). Splits are whole pages, about eight items per
 * thread (at least 512 keys each): on a shared machine a thread that loses its core holds
 * up the others for at most one short item. */
static int decode_fused(const pl_paged_attention_args *a, const pl_attn_geom *g, const pl_attn_kernels *k) {
    const int Hkv = a->num_kv_heads, L = a->query_len, G = g->group, rph = L * G, ps = a->page_size;
    const int ngr = (rph + 3) / 4, hpg = PL_ATTN_DEC_GROUPS / ngr < Hkv ? PL_ATTN_DEC_GROUPS / ngr : Hkv;
    const int nhg = (Hkv + hpg - 1) / hpg;
    const int nthreads = omp_get_max_threads();

    int64_t total = 0;
    for (int b = 0; b < a->batch; b++) total += a->context_lens[b];
    int64_t chunk = (total + 8 * (int64_t)nthreads - 1) / (8 * (int64_t)nthreads);
    if (chunk < 16 * PL_ATTN_BK) chunk = 16 * PL_ATTN_BK;
    chunk = (chunk + ps - 1) / ps * ps;

    int *first = malloc(sizeof(int) * ((size_t)a->batch + 1)); /* first (split, kv head) state of row b */
    int *ifirst = malloc(sizeof(int) * ((size_t)a->batch + 1)); /* first item of row b */
    if (!first || !ifirst) {
        free(first), free(ifirst);
        return PL_ERR_NOMEM;
    }
    first[0] = ifirst[0] = 0;
    for (int b = 0; b < a->batch; b++) {
        int ns = (int)((a->context_lens[b] + chunk - 1) / chunk);
        first[b + 1] = first[b] + ns * Hkv;
        ifirst[b + 1] = ifirst[b] + ns * nhg;
    }
    const int nitems = ifirst[a->batch];
    const size_t part = (size_t)rph * (128 + 2); /* m, l, o of one (split, kv head) */
    const size_t q16f = ((size_t)hpg * rph * 128 / 2 + 15) / 16 * 16;
    const size_t owf = (size_t)hpg * ngr * 4 * 128;
    const size_t limf = ((size_t)rph + 15) / 16 * 16, mergef = ((size_t)rph * 129 + 15) / 16 * 16;
    const size_t per_thread = owf + q16f + limf + mergef; /* a multiple of 16 floats */
    float *parts = malloc(sizeof(float) * (part * (size_t)(first[a->batch] > 0 ? first[a->batch] : 1)));
    float *scratch = aligned_alloc(64, sizeof(float) * (per_thread * (size_t)nthreads + 64));
    if (!parts || !scratch) {
        free(first), free(ifirst), free(parts), free(scratch);
        return PL_ERR_NOMEM;
    }
    uint16_t *zero = (uint16_t *)(scratch + per_thread * (size_t)nthreads);
    for (int d = 0; d < 128; d++) zero[d] = 0;

#pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num();
        float *mine = scratch + per_thread * (size_t)t;
        float *ow = mine; /* 64-byte aligned: per_thread is a multiple of 16 floats */
        uint16_t *q16 = (uint16_t *)(ow + owf);
        int *lim = (int *)(ow + owf + q16f);
        float *merge = ow + owf + q16f + limf;
        int b = 0;
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < nitems; it++) {
            while (ifirst[b + 1] <= it) b++;
            int local = it - ifirst[b], hg = local % nhg, split = local / nhg;
            int ctx = a->context_lens[b], h0 = hg * hpg, nh = Hkv - h0 < hpg ? Hkv - h0 : hpg;
            int k0 = (int)(split * chunk), k1 = (int)((split + 1) * chunk < ctx ? (split + 1) * chunk : ctx);
            float *st = parts + part * (size_t)(first[b] + split * Hkv + h0);
            for (int h = 0; h < nh; h++) {
                float *m = st + part * (size_t)h, *l = m + rph, *o = l + rph;
                for (int i = 0; i < rph; i++) m[i] = -INFINITY, l[i] = 0.0f;
                for (size_t e = 0; e < (size_t)rph * 128; e++) o[e] = 0.0f;
                pl_attn_stage_q_bf16(g, b, h0 + h, 0, L, q16 + (size_t)h * rph * 128);
            }
            for (int l = 0; l < L; l++)
                for (int j = 0; j < G; j++) lim[l * G + j] = pl_attn_visible(a, ctx, l);
            pl_attn_dec_args da = {(const uint16_t *)a->key_pages, (const uint16_t *)a->value_pages,
                                   a->block_table + (size_t)b * a->max_pages, (size_t)Hkv * ps * 128, ps, k0, k1, h0, nh,
                                   q16, rph, lim, g->qscale, st, part, ow, zero};
            k->decode_bf16(&da);
            if (first[b + 1] - first[b] == Hkv) /* no split */
                for (int h = 0; h < nh; h++) {
                    const float *l = st + part * (size_t)h + rph;
                    pl_attn_store(g, b, h0 + h, 0, L, l + rph, l);
                }
        }
#pragma omp for schedule(dynamic, 1)
        for (int bk = 0; bk < a->batch * Hkv; bk++) {
            int bb = bk / Hkv, kvh = bk % Hkv;
            int ns = (first[bb + 1] - first[bb]) / Hkv;
            if (ns > 1) merge_store(g, parts, part, first[bb], ns, Hkv, bb, kvh, rph, merge);
        }
    }
    pl_attn_zero_inactive(a);
    free(first), free(ifirst), free(parts), free(scratch);
    return PL_OK;
}

int pl_attn_decode(const pl_paged_attention_args *a, int simd_level) {
    pl_attn_geom g;
    pl_attn_geom_init(&g, a);
    const pl_attn_kernels *k = pl_attn_kernels_for(simd_level);
    if (pl_attn_raw_bf16(a, k, 0) && k->decode_bf16 && (a->query_len * g.group + 3) / 4 <= PL_ATTN_DEC_GROUPS)
        return decode_fused(a, &g, k);
    const int Hkv = a->num_kv_heads, dp = g.dp, rows = a->query_len * g.group;
    const int nthreads = omp_get_max_threads();

    /* Chunk so there are a few items per thread, tile-aligned, at least 4 tiles long. */
    int64_t total = 0;
    for (int b = 0; b < a->batch; b++) total += (int64_t)a->context_lens[b] * Hkv;
    int64_t chunk = total / (4 * (int64_t)nthreads);
    chunk = (chunk + PL_ATTN_BK - 1) / PL_ATTN_BK * PL_ATTN_BK;
    if (chunk < 4 * PL_ATTN_BK) chunk = 4 * PL_ATTN_BK;

    int *first = malloc(sizeof(int) * ((size_t)a->batch + 1)); /* first item of row b */
    if (!first) return PL_ERR_NOMEM;
    first[0] = 0;
    for (int b = 0; b < a->batch; b++) {
        int ctx = a->context_lens[b];
        int ns = (int)((ctx + chunk - 1) / chunk);
        first[b + 1] = first[b] + ns * Hkv;
    }
    const int nitems = first[a->batch];
    const size_t part = (size_t)rows * (dp + 2); /* m, l, o of one item */
    const size_t per_thread = pl_attn_work_floats(dp, rows) + (size_t)rows * dp + (size_t)rows;
    float *parts = malloc(sizeof(float) * (part * (size_t)(nitems > 0 ? nitems : 1)));
    float *scratch = malloc(sizeof(float) * (per_thread * (size_t)nthreads + (size_t)dp));
    int *lims = malloc(sizeof(int) * (size_t)rows * (size_t)nthreads);
    if (!parts || !scratch || !lims) {
        free(first), free(parts), free(scratch), free(lims);
        return PL_ERR_NOMEM;
    }
    float *zero = scratch + per_thread * (size_t)nthreads;
    for (int d = 0; d < dp; d++) zero[d] = 0.0f;

#pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num();
        float *mine = scratch + per_thread * (size_t)t;
        pl_attn_work w;
        pl_attn_work_bind(&w, mine, dp, rows, zero);
        float *qs = mine + pl_attn_work_floats(dp, rows);
        int *lim = lims + (size_t)rows * t;
        int b = 0;
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < nitems; it++) {
            while (first[b + 1] <= it) b++;
            int local = it - first[b], kvh = local % Hkv, split = local / Hkv;
            int ctx = a->context_lens[b];
            int k0 = (int)(split * chunk), k1 = (int)((split + 1) * chunk < ctx ? (split + 1) * chunk : ctx);
            float *m = parts + part * (size_t)it, *l = m + rows, *o = l + rows;
            for (int i = 0; i < rows; i++) m[i] = -INFINITY, l[i] = 0.0f;
            for (size_t e = 0; e < (size_t)rows * dp; e++) o[e] = 0.0f;
            pl_attn_stage_q(&g, k, b, kvh, 0, a->query_len, qs, lim);
            if (pl_attn_raw_bf16(a, k, 0)) pl_attn_stage_q_bf16(&g, b, kvh, 0, a->query_len, (uint16_t *)qs);
            pl_attn_sweep(&g, k, &w, b, kvh, k0, k1, qs, rows, lim, m, l, o, 0);
            if (first[b + 1] - first[b] == Hkv) pl_attn_store(&g, b, kvh, 0, a->query_len, o, l); /* no split */
        }
        /* merge the splits of each (row, KV head) */
#pragma omp for schedule(dynamic, 1)
        for (int bk = 0; bk < a->batch * Hkv; bk++) {
            int bb = bk / Hkv, kvh = bk % Hkv;
            int ns = (first[bb + 1] - first[bb]) / Hkv;
            if (ns <= 1) continue; /* inactive, or stored by the sweep */
            merge_store(&g, parts, part, first[bb], ns, Hkv, bb, kvh, rows, mine); /* thread scratch reused */
        }
    }
    pl_attn_zero_inactive(a);
    free(first), free(parts), free(scratch), free(lims);
    return PL_OK;
}
