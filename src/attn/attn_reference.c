/* REFERENCE: gather each row's visible keys and compute in float64. The oracle. */
#include <math.h>
#include <stdlib.h>

#include "attn/attn_internal.h"

int pl_attn_reference(const pl_paged_attention_args *a) {
    const int D = a->head_dim, H = a->num_heads, L = a->query_len, ps = a->page_size;
    const int G = a->num_heads / a->num_kv_heads;
    int maxctx = 0;
    for (int b = 0; b < a->batch; b++)
        if (a->context_lens[b] > maxctx) maxctx = a->context_lens[b];
    size_t n = (size_t)(maxctx > 0 ? maxctx : 1);
    double *k = malloc(sizeof(double) * n * (size_t)D), *v = malloc(sizeof(double) * n * (size_t)D);
    double *p = malloc(sizeof(double) * n), *acc = malloc(sizeof(double) * (size_t)D * 2);
    if (!k || !v || !p || !acc) {
        free(k), free(v), free(p), free(acc);
        return PL_ERR_NOMEM;
    }
    const double scale = (double)pl_attn_scale(a);
    for (int b = 0; b < a->batch; b++) {
        int ctx = a->context_lens[b];
        for (int h = 0; h < H; h++) {
            int kvh = h / G;
            /* gather this KV head's context */
            for (int s = 0; s < ctx; s++) {
                int page = a->block_table[(size_t)b * a->max_pages + s / ps];
                size_t base = (((size_t)page * a->num_kv_heads + kvh) * ps + s % ps) * D;
                for (int d = 0; d < D; d++) {
                    k[(size_t)s * D + d] = pl_attn_load(a->key_pages, a->dtype, base + d);
                    v[(size_t)s * D + d] = pl_attn_load(a->value_pages, a->dtype, base + d);
                }
            }
            for (int l = 0; l < L; l++) {
                size_t qo = (((size_t)b * L + l) * H + h) * D;
                int vis = ctx > 0 ? pl_attn_visible(a, ctx, l) : 0;
                double mx = -INFINITY, sum = 0, *q = acc + D;
                for (int d = 0; d < D; d++) q[d] = pl_attn_load(a->query, a->dtype, qo + d);
                for (int s = 0; s < vis; s++) {
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += q[d] * k[(size_t)s * D + d];
                    p[s] = dot * scale;
                    if (p[s] > mx) mx = p[s];
                }
                for (int d = 0; d < D; d++) acc[d] = 0;
                for (int s = 0; s < vis; s++) {
                    double e = exp(p[s] - mx);
                    sum += e;
                    for (int d = 0; d < D; d++) acc[d] += e * v[(size_t)s * D + d];
                }
                for (int d = 0; d < D; d++)
                    pl_attn_store1(a->out, a->dtype, qo + d, sum > 0 ? (float)(acc[d] / sum) : 0.0f);
            }
        }
    }
    free(k), free(v), free(p), free(acc);
    return PL_OK;
}
