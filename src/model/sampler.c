/* Token sampling: greedy, or temperature -> top-k -> top-p with a seeded MT19937 so runs
 * reproduce. Only candidates that can matter are sorted: top-k keeps k, and top-p alone
 * keeps tokens whose probability is at least (1 - top_p) / (2 V), a set that always holds
 * the nucleus (the rest weigh less than 1 - top_p together). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "model/model_internal.h"

struct pl_sampler {
    pl_sampler_params p;
    int vocab;
    pl_mt19937 rng;
    int32_t *idx;
    float *prob;
};

int32_t pl_argmax(const float *logits, int n) {
    if (!logits || n <= 0) return -1;
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best] || (isnan(logits[best]) && !isnan(logits[i]))) best = i;
    return best;
}

int pl_sampler_create(const pl_sampler_params *params, int vocab_size, pl_sampler **out, char *err, size_t err_len) {
    if (!params || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_sampler_create: params/out is NULL");
    if (vocab_size <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "vocab_size: %d must be > 0", vocab_size);
    if (!isfinite(params->temperature))
        return pl_fail(err, err_len, PL_ERR_INVALID, "temperature: %g must be finite", params->temperature);
    if (params->top_k < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "top_k: %d must be >= 0", params->top_k);
    if (!(params->top_p > 0 && params->top_p <= 1))
        return pl_fail(err, err_len, PL_ERR_INVALID, "top_p: %g must be in (0, 1]", params->top_p);
    pl_sampler *s = calloc(1, sizeof *s);
    if (!s) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_sampler_create: out of memory");
    s->p = *params;
    s->vocab = vocab_size;
    s->idx = malloc(sizeof(int32_t) * (size_t)vocab_size);
    s->prob = malloc(sizeof(float) * (size_t)vocab_size);
    if (!s->idx || !s->prob) {
        pl_sampler_free(s);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_sampler_create: out of memory");
    }
    pl_mt_seed(&s->rng, params->seed);
    *out = s;
    return PL_OK;
}

void pl_sampler_free(pl_sampler *s) {
    if (!s) return;
    free(s->idx);
    free(s->prob);
    free(s);
}

/* Descending probability, ties by lower id, so the order is total and reproducible. */
static int cmp_desc(const int32_t *a, const int32_t *b, const float *p) {
    int32_t i = *a, j = *b;
    if (p[i] != p[j]) return p[i] > p[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Sorts ids best-first by the total order (qsort_r is not C11). */
static void sort_idx(int32_t *idx, int n, const float *p) {
    /* Heap sort: O(n log n), no recursion, deterministic with the total order above. */
    for (int start = n / 2 - 1; start >= 0; start--) {
        int root = start;
        for (;;) {
            int child = 2 * root + 1;
            if (child >= n) break;
            if (child + 1 < n && cmp_desc(&idx[child], &idx[child + 1], p) < 0) child++;
            if (cmp_desc(&idx[root], &idx[child], p) >= 0) break;
            int32_t t = idx[root];
            idx[root] = idx[child];
            idx[child] = t;
            root = child;
        }
    }
    for (int end = n - 1; end > 0; end--) {
        int32_t t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        int root = 0;
        for (;;) {
            int child = 2 * root + 1;
            if (child >= end) break;
            if (child + 1 < end && cmp_desc(&idx[child], &idx[child + 1], p) < 0) child++;
            if (cmp_desc(&idx[root], &idx[child], p) >= 0) break;
            int32_t u = idx[root];
            idx[root] = idx[child];
            idx[child] = u;
            root = child;
        }
    }
}

void pl_sampler_next(pl_sampler *s, pl_sample_req *out) {
    if (!s) {
        *out = (pl_sample_req){0.0f, 0, 1.0f, 0.0};
        return;
    }
    out->temperature = s->p.temperature;
    out->top_k = s->p.top_k;
    out->top_p = s->p.top_p;
    out->u = s->p.temperature > 0 ? pl_mt_random(&s->rng) : 0.0;
}

int pl_sampler_greedy(const pl_sampler *s) { return !s || s->p.temperature <= 0; }

void pl_sampler_get_rng(const pl_sampler *s, pl_mt19937 *state) { *state = s->rng; }
void pl_sampler_set_rng(pl_sampler *s, const pl_mt19937 *state) { s->rng = *state; }

int32_t pl_sampler_sample(pl_sampler *s, const float *logits) {
    if (!s || !logits) return -1;
    pl_sample_req q;
    pl_sampler_next(s, &q);
    return pl_sample_row(&q, logits, s->vocab, s->idx, s->prob);
}

/* The draw q->u is taken before the row is looked at, so a device sampler given the same
 * draw makes the same choice; degenerate rows (no finite logit) fall back to argmax. */
int32_t pl_sample_row(const pl_sample_req *q, const float *logits, int V, int32_t *idx, float *prob) {
    if (q->temperature <= 0) return pl_argmax(logits, V);
    const pl_sampler_params pp = {q->temperature, q->top_k, q->top_p, 0};
    const pl_sampler_params *P = &pp;
    float mx = -INFINITY;
    for (int i = 0; i < V; i++)
        if (logits[i] > mx) mx = logits[i];
    if (!isfinite(mx)) return pl_argmax(logits, V);
    double sum = 0;
    float inv_t = 1.0f / P->temperature;
    for (int i = 0; i < V; i++) {
        float e = expf((logits[i] - mx) * inv_t);
        prob[i] = e;
        sum += e;
    }
    float inv = (float)(1.0 / sum);
    for (int i = 0; i < V; i++) prob[i] *= inv;
    int n = 0;
    if (P->top_k > 0 && P->top_k < V) {
        /* Keep the k best (by the total order), then sort them. */
        int k = P->top_k;
        /* Min-heap (by the total order) of the k best so far: root = worst kept. */
        for (int i = 0; i < V; i++) {
            int32_t cand = i;
            if (n < k) {
                int c = n++;
                idx[c] = cand;
                while (c > 0) {
                    int par = (c - 1) / 2;
                    if (cmp_desc(&idx[c], &idx[par], prob) <= 0) break;
                    int32_t t = idx[c];
                    idx[c] = idx[par];
                    idx[par] = t;
                    c = par;
                }
            } else if (cmp_desc(&cand, &idx[0], prob) < 0) {
                idx[0] = cand;
                int root = 0;
                for (;;) {
                    int ch = 2 * root + 1;
                    if (ch >= n) break;
                    if (ch + 1 < n && cmp_desc(&idx[ch + 1], &idx[ch], prob) > 0) ch++;
                    if (cmp_desc(&idx[ch], &idx[root], prob) <= 0) break;
                    int32_t t = idx[ch];
                    idx[ch] = idx[root];
                    idx[root] = t;
                    root = ch;
                }
            }
        }
        sort_idx(idx, n, prob);
    } else {
        float t = P->top_p < 1 ? (1.0f - P->top_p) / (2.0f * (float)V) : 0.0f;
        for (int i = 0; i < V; i++)
            if (prob[i] >= t && prob[i] > 0) idx[n++] = i;
        if (n == 0) return pl_argmax(logits, V);
        sort_idx(idx, n, prob);
    }
    if (P->top_p < 1) {
        double mass = 0, kept = 0;
        if (P->top_k > 0 && P->top_k < V)
            for (int i = 0; i < n; i++) mass += prob[idx[i]];
        else
            mass = 1.0; /* the dropped tail counts in the nucleus threshold */
        int m = 0;
        for (; m < n; m++) {
            kept += prob[idx[m]];
            if (kept >= P->top_p * mass) {
                m++;
                break;
            }
        }
        n = m < 1 ? 1 : m;
    }
    double total = 0;
    for (int i = 0; i < n; i++) total += prob[idx[i]];
    double u = q->u * total, c = 0;
    for (int i = 0; i < n; i++) {
        c += prob[idx[i]];
        if (u < c) return idx[i];
    }
    return idx[n - 1];
}
