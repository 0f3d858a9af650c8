/* FLASH: tiled online softmax for long queries. A block of query tokens times the GQA group
 * (about 128 rows) sweeps K/V tiles of 32 keys staged from the pages (one block-table lookup
 * per tile when page_size % 32 == 0, per-key translation otherwise), with scale*log2(e)
 * folded in and exp2 in the loop; tiles past the block's last visible key are never loaded
 * (causal); the output is normalized and stored once. K is staged transposed so the Q.K^T
 * micro-kernel broadcasts Q (bf16 pairs into vdpbf16ps on AVX512_BF16, f32 FMA otherwise). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "attn/attn_internal.h"

int pl_attn_flash(const pl_paged_attention_args *a, int simd_level) {
    pl_attn_geom g;
    pl_attn_geom_init(&g, a);
    const pl_attn_kernels *k = pl_attn_kernels_for(simd_level);
    const int Hkv = a->num_kv_heads, dp = g.dp, G = g.group, L = a->query_len;
    const int nthreads = omp_get_max_threads();
    int bq = 128 / G;
    bq = bq < 1 ? 1 : bq > 64 ? 64 : bq;
    if (bq > L) bq = L;
    const int rows = bq * G, nqb = (L + bq - 1) / bq;
    const int nitems = a->batch * Hkv * nqb;
    const size_t per_thread = pl_attn_work_floats(dp, rows) + (size_t)rows * (2 * (size_t)dp + 2);
    float *scratch = malloc(sizeof(float) * (per_thread * (size_t)nthreads + (size_t)dp));
    int *lims = malloc(sizeof(int) * (size_t)rows * (size_t)nthreads);
    if (!scratch || !lims) {
        free(scratch), free(lims);
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
        float *qs = mine + pl_attn_work_floats(dp, rows), *o = qs + (size_t)rows * dp;
        float *m = o + (size_t)rows * dp, *l = m + rows;
        int *lim = lims + (size_t)rows * t;
        /* heaviest blocks (last query blocks under causal) first */
#pragma omp for schedule(dynamic, 1)
        for (int it = 0; it < nitems; it++) {
            int qb = nqb - 1 - it % nqb, kvh = (it / nqb) % Hkv, b = it / (nqb * Hkv);
            if (a->context_lens[b] == 0) continue;
            int l0 = qb * bq, nl = L - l0 < bq ? L - l0 : bq, nr = nl * G;
            pl_attn_stage_q(&g, k, b, kvh, l0, nl, qs, lim);
            if (pl_attn_raw_bf16(a, k, nr >= 16)) pl_attn_stage_q_bf16(&g, b, kvh, l0, nl, (uint16_t *)qs);
            for (int i = 0; i < nr; i++) m[i] = -INFINITY, l[i] = 0.0f;
            for (size_t e = 0; e < (size_t)nr * dp; e++) o[e] = 0.0f;
            int kend = lim[nr - 1]; /* visibility grows with the token index */
            pl_attn_sweep(&g, k, &w, b, kvh, 0, kend, qs, nr, lim, m, l, o, nr >= 16);
            pl_attn_store(&g, b, kvh, l0, nl, o, l);
        }
    }
    pl_attn_zero_inactive(a);
    free(scratch), free(lims);
    return PL_OK;
}
