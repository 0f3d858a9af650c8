/* SCALAR: plain f32 loops over pages and slots with a per-key online softmax (natural exp).
 * The generic control every fast schedule is measured against. */
#include <math.h>
#include <stdlib.h>

#include "attn/attn_internal.h"

int pl_attn_scalar(const pl_paged_attention_args *a) {
    const int D = a->head_dim, H = a->num_heads, L = a->query_len, ps = a->page_size;
    const int G = a->num_heads / a->num_kv_heads;
    float *q = malloc(sizeof(float) * (size_t)D * 2);
    if (!q) return PL_ERR_NOMEM;
    float *o = q + D;
    const float scale = pl_attn_scale(a);
    for (int b = 0; b < a->batch; b++) {
        int ctx = a->context_lens[b];
        const int32_t *bt = a->block_table + (size_t)b * a->max_pages;
        for (int l = 0; l < L; l++) {
            int vis = ctx > 0 ? pl_attn_visible(a, ctx, l) : 0;
            for (int h = 0; h < H; h++) {
                int kvh = h / G;
                size_t qo = (((size_t)b * L + l) * H + h) * D;
                for (int d = 0; d < D; d++) {
                    q[d] = pl_attn_load(a->query, a->dtype, qo + d);
                    o[d] = 0.0f;
                }
                float m = -INFINITY, sum = 0.0f;
                for (int pg = 0; pg * ps < vis; pg++) {
                    int page = bt[pg];
                    int n = vis - pg * ps < ps ? vis - pg * ps : ps;
                    size_t base = ((size_t)page * a->num_kv_heads + kvh) * ps * D;
                    for (int slot = 0; slot < n; slot++) {
                        size_t ko = base + (size_t)slot * D;
                        float x = 0.0f;
                        for (int d = 0; d < D; d++) x += q[d] * pl_attn_load(a->key_pages, a->dtype, ko + d);
                        x *= scale;
                        float mn = x > m ? x : m;
                        float c = expf(m - mn), e = expf(x - mn);
                        sum = sum * c + e;
                        for (int d = 0; d < D; d++) o[d] = o[d] * c + e * pl_attn_load(a->value_pages, a->dtype, ko + d);
                        m = mn;
                    }
                }
                for (int d = 0; d < D; d++) pl_attn_store1(a->out, a->dtype, qo + d, sum > 0 ? o[d] / sum : 0.0f);
            }
        }
    }
    free(q);
    return PL_OK;
}
