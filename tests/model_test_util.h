/* Shared helpers of the model tests: a readable double-precision Qwen3 reference forward
 * over a model's logical weights, and a dense attend op (K/V kept per sequence). */
#ifndef PL_MODEL_TEST_UTIL_H
#define PL_MODEL_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bf16.h"
#include "model/model_internal.h"
#include "pagellm/model.h"

static float *mt_tensor(const pl_model *m, int layer, int idx, int *rows, int *cols) {
    pl_tensor_shape(pl_model_get_config(m), layer, idx, rows, cols);
    float *t = malloc(sizeof(float) * (size_t)(*rows) * (size_t)(*cols));
    char err[256];
    for (int r = 0; r < *rows; r++)
        if (pl_model_tensor_row(m, layer, idx, r, t + (size_t)r * (*cols), err, sizeof err)) {
            fprintf(stderr, "tensor_row: %s\n", err);
            exit(1);
        }
    return t;
}

/* y[n] = sum_k x[k] W[n, k] */
static void mt_linear(const float *W, int N, int K, const double *x, double *y) {
    for (int n = 0; n < N; n++) {
        double s = 0;
        for (int k = 0; k < K; k++) s += x[k] * W[(size_t)n * K + k];
        y[n] = s;
    }
}

static void mt_rms(double *x, int n, const float *w, double eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) x[i] = x[i] * inv * w[i];
}

static void mt_rope(double *x, int hd, int pos, double theta) {
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        double ang = pos * pow(theta, -2.0 * i / hd);
        double c = cos(ang), s = sin(ang), a = x[i], b = x[i + half];
        x[i] = a * c - b * s;
        x[i + half] = b * c + a * s;
    }
}

/* logits [n, vocab] for every position of one sequence of n tokens starting at position 0. */
static void mt_reference_forward(const pl_model *m, const int32_t *tokens, int n, float *logits) {
    const pl_model_config *c = pl_model_get_config(m);
    int H = c->hidden_size, nq = c->num_heads, nkv = c->num_kv_heads, D = c->head_dim, I = c->intermediate_size;
    int V = c->vocab_size, G = nq / nkv, r, k;
    double eps = c->rms_norm_eps;
    float *emb = mt_tensor(m, -1, PL_T_EMBED, &r, &k);
    double *h = calloc((size_t)n * H, sizeof(double));
    for (int t = 0; t < n; t++)
        for (int i = 0; i < H; i++) h[(size_t)t * H + i] = emb[(size_t)tokens[t] * H + i];
    double *a = malloc(sizeof(double) * H), *q = malloc(sizeof(double) * (size_t)n * nq * D);
    double *K = malloc(sizeof(double) * (size_t)n * nkv * D), *Vv = malloc(sizeof(double) * (size_t)n * nkv * D);
    double *att = malloc(sizeof(double) * nq * D), *o = malloc(sizeof(double) * H);
    double *g = malloc(sizeof(double) * I), *u = malloc(sizeof(double) * I), *sc = malloc(sizeof(double) * n);
    for (int l = 0; l < c->num_layers; l++) {
        float *wq = mt_tensor(m, l, PL_T_Q, &r, &k), *wk = mt_tensor(m, l, PL_T_K, &r, &k);
        float *wv = mt_tensor(m, l, PL_T_V, &r, &k), *wo = mt_tensor(m, l, PL_T_O, &r, &k);
        float *wg = mt_tensor(m, l, PL_T_GATE, &r, &k), *wu = mt_tensor(m, l, PL_T_UP, &r, &k);
        float *wd = mt_tensor(m, l, PL_T_DOWN, &r, &k), *ni = mt_tensor(m, l, PL_T_IN_NORM, &r, &k);
        float *np = mt_tensor(m, l, PL_T_POST_NORM, &r, &k), *qn = mt_tensor(m, l, PL_T_Q_NORM, &r, &k);
        float *kn = mt_tensor(m, l, PL_T_K_NORM, &r, &k);
        for (int t = 0; t < n; t++) {
            memcpy(a, h + (size_t)t * H, sizeof(double) * H);
            mt_rms(a, H, ni, eps);
            mt_linear(wq, nq * D, H, a, q + (size_t)t * nq * D);
            mt_linear(wk, nkv * D, H, a, K + (size_t)t * nkv * D);
            mt_linear(wv, nkv * D, H, a, Vv + (size_t)t * nkv * D);
            for (int hh = 0; hh < nq; hh++) {
                mt_rms(q + ((size_t)t * nq + hh) * D, D, qn, eps);
                mt_rope(q + ((size_t)t * nq + hh) * D, D, t, c->rope_theta);
            }
            for (int hh = 0; hh < nkv; hh++) {
                mt_rms(K + ((size_t)t * nkv + hh) * D, D, kn, eps);
                mt_rope(K + ((size_t)t * nkv + hh) * D, D, t, c->rope_theta);
            }
        }
        for (int t = 0; t < n; t++) {
            for (int hh = 0; hh < nq; hh++) {
                int kh = hh / G;
                double mx = -1e300, sum = 0;
                for (int s = 0; s <= t; s++) {
                    double d = 0;
                    for (int i = 0; i < D; i++) d += q[((size_t)t * nq + hh) * D + i] * K[((size_t)s * nkv + kh) * D + i];
                    sc[s] = d / sqrt((double)D);
                    if (sc[s] > mx) mx = sc[s];
                }
                for (int s = 0; s <= t; s++) sum += (sc[s] = exp(sc[s] - mx));
                for (int i = 0; i < D; i++) {
                    double acc = 0;
                    for (int s = 0; s <= t; s++) acc += sc[s] * Vv[((size_t)s * nkv + kh) * D + i];
                    att[hh * D + i] = acc / sum;
                }
            }
            mt_linear(wo, H, nq * D, att, o);
            for (int i = 0; i < H; i++) h[(size_t)t * H + i] += o[i];
            memcpy(a, h + (size_t)t * H, sizeof(double) * H);
            mt_rms(a, H, np, eps);
            mt_linear(wg, I, H, a, g);
            mt_linear(wu, I, H, a, u);
            for (int i = 0; i < I; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
            double *dn = malloc(sizeof(double) * H);
            for (int i = 0; i < H; i++) {
                double s = 0;
                for (int j = 0; j < I; j++) s += g[j] * wd[(size_t)i * I + j];
                dn[i] = s;
            }
            for (int i = 0; i < H; i++) h[(size_t)t * H + i] += dn[i];
            free(dn);
        }
        free(wq), free(wk), free(wv), free(wo), free(wg), free(wu), free(wd), free(ni), free(np), free(qn), free(kn);
    }
    float *fn = mt_tensor(m, -1, PL_T_FINAL_NORM, &r, &k);
    float *head = c->tie_word_embeddings ? emb : mt_tensor(m, -1, PL_T_LM_HEAD, &r, &k);
    double *lg = malloc(sizeof(double) * V);
    for (int t = 0; t < n; t++) {
        memcpy(a, h + (size_t)t * H, sizeof(double) * H);
        mt_rms(a, H, fn, eps);
        mt_linear(head, V, H, a, lg);
        for (int v = 0; v < V; v++) logits[(size_t)t * V + v] = (float)lg[v];
    }
    if (head != emb) free(head);
    free(emb), free(fn), free(lg), free(h), free(a), free(q), free(K), free(Vv), free(att), free(o), free(g), free(u),
        free(sc);
}

/* Dense attend op: per (slot, layer) K/V in float; exact softmax in double. */
typedef struct mt_dense {
    int slots, layers, cap, nkv, D;
    float *k, *v; /* [slots][layers][cap][nkv*D] */
    int *len;     /* [slots][layers] */
} mt_dense;

static mt_dense *mt_dense_create(int slots, int layers, int cap, int nkv, int D) {
    mt_dense *d = calloc(1, sizeof *d);
    d->slots = slots, d->layers = layers, d->cap = cap, d->nkv = nkv, d->D = D;
    size_t n = (size_t)slots * layers * cap * nkv * D;
    d->k = calloc(n, sizeof(float));
    d->v = calloc(n, sizeof(float));
    d->len = calloc((size_t)slots * layers, sizeof(int));
    return d;
}
static void mt_dense_free(mt_dense *d) {
    free(d->k), free(d->v), free(d->len), free(d);
}

static float mt_ld(pl_dtype dt, const void *p, size_t i) {
    return dt == PL_F32 ? ((const float *)p)[i] : pl_bf16_to_f32(((const uint16_t *)p)[i]);
}

static int mt_dense_attend(void *ctx, const pl_attend_call *c, char *err, size_t err_len) {
    mt_dense *d = ctx;
    int G = c->num_heads / c->num_kv_heads, D = c->head_dim, w = c->num_kv_heads * D;
    double *sc = malloc(sizeof(double) * d->cap);
    for (int s = 0; s < c->num_seqs; s++) {
        int L = c->chunk_lens[s];
        if (!L) continue;
        int *len = &d->len[s * d->layers + c->layer];
        if (*len != c->positions[s] || *len + L > d->cap) {
            free(sc);
            return pl_fail(err, err_len, PL_ERR_INVALID, "dense: slot %d holds %d, position %d", s, *len, c->positions[s]);
        }
        float *K = d->k + ((size_t)s * d->layers + c->layer) * d->cap * w;
        float *V = d->v + ((size_t)s * d->layers + c->layer) * d->cap * w;
        for (int t = 0; t < L; t++) {
            size_t row = (size_t)(c->row_start[s] + t);
            for (int i = 0; i < w; i++) {
                K[(size_t)(*len + t) * w + i] = mt_ld(c->dtype, c->k, row * c->qkv_token_stride + i);
                V[(size_t)(*len + t) * w + i] = mt_ld(c->dtype, c->v, row * c->qkv_token_stride + i);
            }
        }
        *len += L;
        for (int t = 0; t < L; t++) {
            size_t row = (size_t)(c->row_start[s] + t);
            int ctxn = c->positions[s] + t + 1;
            for (int h = 0; h < c->num_heads; h++) {
                int kh = h / G;
                double mx = -1e300, sum = 0;
                for (int j = 0; j < ctxn; j++) {
                    double dd = 0;
                    for (int i = 0; i < D; i++)
                        dd += (double)mt_ld(c->dtype, c->q, row * c->qkv_token_stride + (size_t)h * D + i) *
                              K[(size_t)j * w + kh * D + i];
                    sc[j] = dd * c->scale;
                    if (sc[j] > mx) mx = sc[j];
                }
                for (int j = 0; j < ctxn; j++) sum += (sc[j] = exp(sc[j] - mx));
                for (int i = 0; i < D; i++) {
                    double acc = 0;
                    for (int j = 0; j < ctxn; j++) acc += sc[j] * V[(size_t)j * w + kh * D + i];
                    float out = (float)(acc / sum);
                    size_t oi = (row * c->num_heads + h) * D + i;
                    if (c->dtype == PL_F32)
                        ((float *)c->out)[oi] = out;
                    else
                        ((uint16_t *)c->out)[oi] = pl_f32_to_bf16(out);
                }
            }
        }
    }
    free(sc);
    return PL_OK;
}

/* max |a - b| and max |b| over n */
static void mt_diff(const float *a, const float *b, size_t n, double *maxdiff, double *maxref) {
    *maxdiff = 0, *maxref = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= *maxdiff)) *maxdiff = d;
        if (fabs(b[i]) > *maxref) *maxref = fabs(b[i]);
    }
}

#endif
