/* Qwen3 forward pass against a readable double-precision reference: f32 and bf16 modes,
 * paged attention and a dense attend op, chunked prefill + decode, batches with empty slots,
 * matmul kernels against each other, error paths. */
#include <stdio.h>

#include "model_test_util.h"
#include "test_util.h"

static char err[512];

/* Runs the sequence through pl_model_forward in the given chunks; logits of every row. */
static int run_chunks(pl_model *m, const int32_t *tokens, const int *chunks, int nchunks, int paged, int page_size,
                      float *out) {
    const pl_model_config *c = pl_model_get_config(m);
    pl_kv_pools pools = {0};
    pl_kv_seq seq = {0};
    mt_dense *d = NULL;
    pl_attend_ops ops = {mt_dense_attend, NULL};
    if (paged) {
        CHECK_OK(pl_model_create_pools(m, page_size, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&seq, &pools, err, sizeof err), err);
    } else {
        d = mt_dense_create(1, c->num_layers, 256, c->num_kv_heads, c->head_dim);
        ops.ctx = d;
    }
    int pos = 0, rc = 0;
    for (int i = 0; i < nchunks && !rc; i++) {
        pl_kv_seq *sp = &seq;
        pl_forward_batch b = {1, tokens + pos, &chunks[i], &pos, &sp, paged ? NULL : &ops, chunks[i] > 1};
        float *dst = out + (size_t)pos * c->vocab_size;
        if (chunks[i] > 1) {
            rc = pl_model_forward(m, &b, dst, err, sizeof err);
        } else {
            rc = pl_model_forward(m, &b, dst, err, sizeof err);
        }
        CHECK_MSG(rc == 0, "chunk %d: %s", i, err);
        pos += chunks[i];
        if (paged) CHECK(pl_kv_seq_offset(&seq) == pos);
    }
    if (paged) {
        for (int l = 0; l < seq.num_layers; l++) CHECK_OK(pl_seq_cache_check(&seq.layers[l], err, sizeof err), err);
        pl_kv_seq_destroy(&seq);
        pl_kv_pools_destroy(&pools);
    } else {
        mt_dense_free(d);
    }
    return rc;
}

static void test_forward_mode(pl_dtype dt, const char *shape) {
    pl_model_options o = {dt, PL_DEVICE_CPU, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, 7, &o, &m, err, sizeof err), err);
    if (!m) return;
    const pl_model_config *c = pl_model_get_config(m);
    enum { N = 21 };
    int32_t tokens[N];
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tokens[i] = (int32_t)((x >> 33) % (uint64_t)c->vocab_size);
    }
    size_t V = (size_t)c->vocab_size;
    float *ref = malloc(sizeof(float) * N * V), *got = malloc(sizeof(float) * N * V);
    mt_reference_forward(m, tokens, N, ref);
    const int chunks[] = {7, 6, 5, 1, 1, 1};
    double tol = dt == PL_F32 ? 1e-4 : 2e-2;
    for (int paged = 0; paged < 2; paged++) {
        for (size_t i = 0; i < N * V; i++) got[i] = NAN;
        run_chunks(m, tokens, chunks, 6, paged, 8, got);
        double md, mr;
        mt_diff(got, ref, N * V, &md, &mr);
        int agree = 0;
        for (int t = 0; t < N; t++) agree += pl_argmax(got + t * V, (int)V) == pl_argmax(ref + t * V, (int)V);
        printf("%s %s %s: max|diff| %.3g, max|ref| %.3g, ratio %.3g, argmax %d/%d\n", shape,
               dt == PL_F32 ? "f32" : "bf16", paged ? "paged" : "dense", md, mr, md / mr, agree, N);
        CHECK_MSG(md <= tol * mr, "%s mode %d paged %d: %g > %g", shape, dt, paged, md, tol * mr);
        if (dt == PL_F32) CHECK(agree == N);
    }
    /* One prefill of the whole prompt, last row only, equals the reference's last row. */
    {
        pl_kv_pools pools;
        pl_kv_seq seq;
        CHECK_OK(pl_model_create_pools(m, 16, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&seq, &pools, err, sizeof err), err);
        int n = N, p0 = 0;
        pl_kv_seq *sp = &seq;
        pl_forward_batch b = {1, tokens, &n, &p0, &sp, NULL, 0};
        CHECK_OK(pl_model_forward(m, &b, got, err, sizeof err), err);
        double md, mr;
        mt_diff(got, ref + (N - 1) * V, V, &md, &mr);
        CHECK_MSG(md <= tol * mr, "last row: %g > %g", md, tol * mr);
        /* positions must equal the cached length */
        int one = 1, bad = 3;
        pl_forward_batch b2 = {1, tokens, &one, &bad, &sp, NULL, 0};
        CHECK_ERR(pl_model_forward(m, &b2, got, err, sizeof err), PL_ERR_INVALID, "positions[0]", err);
        pl_kv_seq_destroy(&seq);
        pl_kv_pools_destroy(&pools);
    }
    free(ref);
    free(got);
    pl_model_free(m);
}

/* A batch: three sequences prefilled together (with an empty slot), then decoded together;
 * every row must match running each sequence alone. */
static void test_batch(pl_dtype dt) {
    pl_model_options o = {dt, PL_DEVICE_CPU, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 11, &o, &m, err, sizeof err), err);
    if (!m) return;
    const pl_model_config *c = pl_model_get_config(m);
    size_t V = (size_t)c->vocab_size;
    enum { S = 4, STEPS = 3 };
    int plen[S] = {5, 0, 3, 9};
    int32_t seqtok[S][16];
    for (int s = 0; s < S; s++)
        for (int t = 0; t < 16; t++) seqtok[s][t] = (int32_t)((s * 131 + t * 17 + 3) % c->vocab_size);
    pl_kv_pools pools;
    CHECK_OK(pl_model_create_pools(m, 4, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
    pl_kv_seq seqs[S];
    pl_kv_seq *sp[S];
    for (int s = 0; s < S; s++) {
        CHECK_OK(pl_kv_seq_init(&seqs[s], &pools, err, sizeof err), err);
        sp[s] = plen[s] ? &seqs[s] : NULL;
    }
    int32_t toks[32];
    int n = 0, pos[S] = {0, 0, 0, 0};
    for (int s = 0; s < S; s++)
        for (int t = 0; t < plen[s]; t++) toks[n++] = seqtok[s][t];
    float *got = malloc(sizeof(float) * S * V * (STEPS + 1)), *ref = malloc(sizeof(float) * 16 * V);
    for (size_t i = 0; i < S * V * (STEPS + 1); i++) got[i] = NAN;
    pl_forward_batch b = {S, toks, plen, pos, sp, NULL, 0};
    CHECK_OK(pl_model_forward(m, &b, got, err, sizeof err), err);
    CHECK(isnan(got[1 * V])); /* empty slot untouched */
    int one[S] = {1, 0, 1, 1};
    for (int step = 0; step < STEPS; step++) {
        int k = 0;
        for (int s = 0; s < S; s++) {
            pos[s] = plen[s] + step;
            if (one[s]) toks[k++] = seqtok[s][plen[s] + step];
        }
        pl_forward_batch d = {S, toks, one, pos, sp, NULL, 0};
        CHECK_OK(pl_model_forward(m, &d, got + (size_t)(step + 1) * S * V, err, sizeof err), err);
    }
    double tol = dt == PL_F32 ? 1e-4 : 2e-2;
    for (int s = 0; s < S; s++) {
        if (!plen[s]) continue;
        int total = plen[s] + STEPS;
        mt_reference_forward(m, seqtok[s], total, ref);
        for (int step = 0; step <= STEPS; step++) {
            double md, mr;
            mt_diff(got + ((size_t)step * S + s) * V, ref + (size_t)(plen[s] - 1 + step) * V, V, &md, &mr);
            CHECK_MSG(md <= tol * mr, "seq %d step %d: %g > %g", s, step, md, tol * mr);
        }
    }
    for (int s = 0; s < S; s++) pl_kv_seq_destroy(&seqs[s]);
    pl_kv_pools_destroy(&pools);
    free(got);
    free(ref);
    pl_model_free(m);
}

/* Each matmul kernel level against a double reference, with row / column tails. */
static void test_matmul_kernels(void) {
    const int Ns[] = {40, 16, 7, 200, 130}, Ks[] = {70, 256}, Ms[] = {1, 2, 3, 8, 13};
    for (int dt = 0; dt < 2; dt++) {
        pl_cpu_backend be = {dt ? PL_BF16 : PL_F32, 2, 0};
        const pl_backend_ops *ops = pl_cpu_backend_ops();
        for (int ni = 0; ni < 5; ni++)
            for (int ki = 0; ki < 2; ki++) {
                int N = Ns[ni], K = Ks[ki];
                float *W = malloc(sizeof(float) * N * K);
                for (int i = 0; i < N * K; i++) W[i] = pl_bf16_round(sinf((float)i * 0.37f) * 0.5f);
                pl_weight_src src = {PL_SRC_F32, N, K, W, NULL, 0, 0, 0};
                const pl_weight_src *parts[1] = {&src};
                void *w = NULL;
                CHECK_OK(ops->weight_create(&be, parts, 1, 1, &w, err, sizeof err), err);
                for (int mi = 0; mi < 5; mi++) {
                    int M = Ms[mi];
                    float *xf = malloc(sizeof(float) * M * K);
                    uint16_t *xb = malloc(sizeof(uint16_t) * M * K);
                    for (int i = 0; i < M * K; i++) {
                        xf[i] = pl_bf16_round(cosf((float)i * 0.11f));
                        xb[i] = pl_f32_to_bf16(xf[i]);
                    }
                    float *out = malloc(sizeof(float) * M * (N + 1));
                    for (int level = 1; level <= 3; level++) {
                        pl_cpu_backend_force_kernel(&be, level);
                        if (be.kernel != level) continue; /* CPU lacks it */
                        for (int i = 0; i < M * (N + 1); i++) out[i] = NAN;
                        CHECK_OK(ops->matmul(&be, dt ? (void *)xb : (void *)xf, M, w, out, 1, err, sizeof err), err);
                        double worst = 0;
                        for (int r = 0; r < M; r++)
                            for (int n = 0; n < N; n++) {
                                double s = 0;
                                for (int k = 0; k < K; k++) s += (double)xf[r * K + k] * W[n * K + k];
                                double d = fabs(s - out[r * N + n]);
                                if (!(d <= worst)) worst = d;
                            }
                        CHECK_MSG(worst < 1e-3, "kernel %d dt %d M %d N %d K %d: %g", level, dt, M, N, K, worst);
                        CHECK(isnan(out[M * N])); /* nothing written past the end */
                    }
                    pl_cpu_backend_force_kernel(&be, 0);
                    free(xf), free(xb), free(out);
                }
                ops->weight_free(&be, w);
                free(W);
            }
    }
}

/* The vectorized bf16 SwiGLU against the scalar one: wide range of gates, a tail. */
static void test_swiglu(void) {
    const pl_backend_ops *ops = pl_cpu_backend_ops();
    pl_cpu_backend be = {PL_BF16, 2, 0};
    enum { R = 3, I = 37 };
    uint16_t gu[R * 2 * I], o1[R * I], o3[R * I];
    for (int i = 0; i < R * 2 * I; i++) gu[i] = pl_f32_to_bf16(sinf((float)i * 1.7f) * (i % 5 == 0 ? 90.0f : 4.0f));
    pl_cpu_backend_force_kernel(&be, 1);
    ops->swiglu(&be, gu, R, I, o1);
    pl_cpu_backend_force_kernel(&be, 3);
    if (be.kernel == 3) {
        ops->swiglu(&be, gu, R, I, o3);
        int bad = 0;
        for (int i = 0; i < R * I; i++) {
            float a = pl_bf16_to_f32(o1[i]), c = pl_bf16_to_f32(o3[i]);
            if (fabsf(a - c) > 1e-2f * fabsf(a) + 1e-6f) bad++;
        }
        CHECK_MSG(bad == 0, "%d swiglu values differ", bad);
    }
    /* RMSNorm and q/k norm + RoPE: vector bf16 paths against the scalar ones. */
    enum { D = 128, H = 3, ROWS = 5 };
    float wv[D];
    for (int i = 0; i < D; i++) wv[i] = 1.0f + 0.1f * cosf((float)i);
    pl_weight_src ws = {PL_SRC_F32, 1, D, wv, NULL, 0, 0, 0};
    const pl_weight_src *wp[1] = {&ws};
    void *w = NULL;
    CHECK_OK(ops->weight_create(&be, wp, 1, 0, &w, err, sizeof err), err);
    uint16_t x[ROWS * H * D], y1[ROWS * H * D], y3[ROWS * H * D];
    for (int i = 0; i < ROWS * H * D; i++) x[i] = pl_f32_to_bf16(sinf((float)i * 0.3f) * 3.0f);
    int32_t pos[ROWS] = {0, 1, 7, 100, 4000};
    for (int op = 0; op < 2; op++) {
        for (int lv = 1; lv <= 3; lv += 2) {
            pl_cpu_backend_force_kernel(&be, lv);
            uint16_t *y = lv == 1 ? y1 : y3;
            memcpy(y, x, sizeof x);
            if (op == 0)
                ops->rmsnorm(&be, x, w, ROWS * H, D, 1e-6f, y);
            else
            {
                float cs[ROWS * D];
                ops->rope_table(&be, pos, ROWS, D, 1e6, cs);
                ops->qk_norm_rope(&be, y, ROWS, (size_t)H * D, 2, 1, D, w, w, 1e-6f, cs, NULL);
            }
        }
        if (be.kernel != 3) continue;
        int bad = 0;
        for (int i = 0; i < ROWS * H * D; i++) {
            float a = pl_bf16_to_f32(y1[i]), c = pl_bf16_to_f32(y3[i]);
            if (fabsf(a - c) > 1e-2f * fabsf(a) + 1e-3f) bad++;
        }
        CHECK_MSG(bad == 0, "op %d: %d values differ", op, bad);
    }
    pl_cpu_backend_force_kernel(&be, 0);
    ops->weight_free(&be, w);
}

static void test_sampler(void) {
    enum { V = 8 };
    float lg[V] = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f, 1.9f, -3.0f, 0.5f};
    CHECK(pl_argmax(lg, V) == 1);
    pl_sampler *s = NULL;
    pl_sampler_params greedy = {0, 0, 1, 1};
    CHECK_OK(pl_sampler_create(&greedy, V, &s, err, sizeof err), err);
    CHECK(pl_sampler_sample(s, lg) == 1);
    pl_sampler_free(s);
    pl_sampler_params topk1 = {1.0f, 1, 1, 5};
    CHECK_OK(pl_sampler_create(&topk1, V, &s, err, sizeof err), err);
    for (int i = 0; i < 20; i++) CHECK(pl_sampler_sample(s, lg) == 1);
    pl_sampler_free(s);
    pl_sampler_params topp = {1.0f, 0, 0.01f, 5};
    CHECK_OK(pl_sampler_create(&topp, V, &s, err, sizeof err), err);
    for (int i = 0; i < 20; i++) CHECK(pl_sampler_sample(s, lg) == 1);
    pl_sampler_free(s);
    /* Frequencies follow softmax(lg / T); same seed reproduces the same draws. */
    pl_sampler_params p = {0.8f, 0, 1, 42};
    pl_sampler *a = NULL, *b = NULL;
    CHECK_OK(pl_sampler_create(&p, V, &a, err, sizeof err), err);
    CHECK_OK(pl_sampler_create(&p, V, &b, err, sizeof err), err);
    int cnt[V] = {0}, same = 1, draws = 40000;
    for (int i = 0; i < draws; i++) {
        int32_t x = pl_sampler_sample(a, lg), y = pl_sampler_sample(b, lg);
        same &= x == y;
        cnt[x]++;
    }
    CHECK(same);
    double z = 0, pr[V];
    for (int i = 0; i < V; i++) z += (pr[i] = exp(lg[i] / 0.8));
    for (int i = 0; i < V; i++) {
        double f = (double)cnt[i] / draws, e = pr[i] / z;
        CHECK_MSG(fabs(f - e) < 0.01, "token %d: freq %.4f, expected %.4f", i, f, e);
    }
    pl_sampler_free(a);
    pl_sampler_free(b);
    /* top-k 3 with top-p 0.5 keeps only the best two here. */
    pl_sampler_params kp = {1.0f, 3, 0.5f, 9};
    CHECK_OK(pl_sampler_create(&kp, V, &s, err, sizeof err), err);
    for (int i = 0; i < 200; i++) {
        int32_t x = pl_sampler_sample(s, lg);
        CHECK(x == 1 || x == 5);
    }
    pl_sampler_free(s);
    pl_sampler_params bad = {1.0f, -1, 1, 0};
    CHECK_ERR(pl_sampler_create(&bad, V, &s, err, sizeof err), PL_ERR_INVALID, "top_k", err);
    bad.top_k = 0;
    bad.top_p = 1.5f;
    CHECK_ERR(pl_sampler_create(&bad, V, &s, err, sizeof err), PL_ERR_INVALID, "top_p", err);
}

static void test_errors(void) {
    pl_model *m = NULL;
    CHECK_ERR(pl_model_create_synthetic("nope", 1, NULL, &m, err, sizeof err), PL_ERR_INVALID, "qwen3-0.6b", err);
    pl_model_options o = {PL_F32, PL_DEVICE_CPU, 1, 0, 2};
    CHECK_ERR(pl_model_create_synthetic("tiny", 1, &o, &m, err, sizeof err), PL_ERR_INVALID, "cuda_attn_splits: 2", err);
    CHECK(m == NULL);
    o.cuda_attn_splits = 0;
    CHECK_OK(pl_model_create_synthetic("tiny", 1, &o, &m, err, sizeof err), err);
    if (!m) return;
    pl_kv_pools pools;
    pl_kv_seq seq;
    CHECK_OK(pl_model_create_pools(m, 8, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_init(&seq, &pools, err, sizeof err), err);
    pl_kv_seq *sp = &seq;
    int32_t toks[2] = {5, 5000};
    int n = 2, p = 0, neg = -1;
    float *lg = malloc(sizeof(float) * 2 * 1024);
    pl_forward_batch b = {1, toks, &n, &p, &sp, NULL, 0};
    CHECK_ERR(pl_model_forward(m, &b, lg, err, sizeof err), PL_ERR_INVALID, "tokens[1]", err);
    CHECK(pl_kv_seq_offset(&seq) == 0);
    b.chunk_lens = &neg;
    CHECK_ERR(pl_model_forward(m, &b, lg, err, sizeof err), PL_ERR_INVALID, "chunk_lens[0]", err);
    pl_kv_seq_destroy(&seq);
    pl_kv_pools_destroy(&pools);
    pl_model_free(m);
    free(lg);
    pl_model_config cfg;
    CHECK_OK(pl_model_shape_config("qwen3-8b", &cfg, err, sizeof err), err);
    CHECK(cfg.tie_word_embeddings == 0 && cfg.num_layers == 36 && cfg.intermediate_size == 12288);
    CHECK_OK(pl_model_shape_config("small", &cfg, err, sizeof err), err);
    CHECK(cfg.vocab_size == 151936 && cfg.eos_ids[0] == 151645 && cfg.num_kv_heads == 2);
}

/* pl_model_forward_sample against pl_model_forward + the host sampler on twin caches:
 * greedy and seeded samplers, an empty slot (-1), tokens NULL (no head, caches still
 * advance), and an invalid batch that leaves the generators and caches as they were. */
static void test_forward_sample(pl_dtype dt) {
    pl_model_options o = {dt, PL_DEVICE_CPU, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 5, &o, &m, err, sizeof err), err);
    if (!m) return;
    const pl_model_config *c = pl_model_get_config(m);
    const size_t V = (size_t)c->vocab_size;
    enum { S = 3 };
    pl_kv_pools pa, pb;
    CHECK_OK(pl_model_create_pools(m, 4, PL_POOL_GROWABLE, 0, &pa, err, sizeof err), err);
    CHECK_OK(pl_model_create_pools(m, 4, PL_POOL_GROWABLE, 0, &pb, err, sizeof err), err);
    pl_kv_seq sa[S], sb[S];
    pl_kv_seq *pa_[S], *pb_[S];
    pl_sampler *smp_a[S] = {NULL, NULL, NULL}, *smp_b[S] = {NULL, NULL, NULL};
    pl_sampler_params sp = {0.9f, 7, 0.85f, 42};
    for (int s = 0; s < S; s++) {
        CHECK_OK(pl_kv_seq_init(&sa[s], &pa, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&sb[s], &pb, err, sizeof err), err);
        pa_[s] = s == 1 ? NULL : &sa[s];
        pb_[s] = s == 1 ? NULL : &sb[s];
    }
    CHECK_OK(pl_sampler_create(&sp, c->vocab_size, &smp_a[2], err, sizeof err), err);
    CHECK_OK(pl_sampler_create(&sp, c->vocab_size, &smp_b[2], err, sizeof err), err);
    float *lg = malloc(sizeof(float) * S * V);
    int32_t toks[16], got[S];
    int plen[S] = {6, 0, 4}, pos[S] = {0, 0, 0};
    int n = 0;
    for (int s = 0; s < S; s++)
        for (int t = 0; t < plen[s]; t++) toks[n++] = (int32_t)((s * 97 + t * 13 + 1) % c->vocab_size);
    /* A prefill chunk without the head, then one with it. */
    pl_forward_batch b = {S, toks, plen, pos, pb_, NULL, 0};
    CHECK_OK(pl_model_forward_sample(m, &b, smp_b, NULL, err, sizeof err), err);
    CHECK_OK(pl_model_finish(m, err, sizeof err), err); /* the CPU's calls are done when they return */
    CHECK_ERR(pl_model_finish(NULL, err, sizeof err), PL_ERR_INVALID, "model must not be NULL", err);
    b.seqs = pa_;
    CHECK_OK(pl_model_forward(m, &b, lg, err, sizeof err), err);
    CHECK(pl_kv_seq_offset(&sb[0]) == 6 && pl_kv_seq_offset(&sb[2]) == 4);
    int one[S] = {1, 0, 1};
    for (int step = 0; step < 6; step++) {
        for (int s = 0; s < S; s++) pos[s] = plen[s] + step;
        int k = 0;
        for (int s = 0; s < S; s++)
            if (one[s]) toks[k++] = (int32_t)((step * 31 + s) % c->vocab_size);
        pl_forward_batch d = {S, toks, one, pos, pa_, NULL, 0};
        CHECK_OK(pl_model_forward(m, &d, lg, err, sizeof err), err);
        int32_t want[S] = {pl_argmax(lg, (int)V), -1, pl_sampler_sample(smp_a[2], lg + 2 * V)};
        d.seqs = pb_;
        got[0] = got[1] = got[2] = 12345;
        CHECK_OK(pl_model_forward_sample(m, &d, smp_b, got, err, sizeof err), err);
        for (int s = 0; s < S; s++) CHECK_MSG(got[s] == want[s], "step %d slot %d: %d, want %d", step, s, got[s], want[s]);
    }
    /* A failing call (token out of range) leaves the generator and the caches alone. */
    pl_sampler_params sp2 = sp;
    pl_sampler *probe = NULL;
    CHECK_OK(pl_sampler_create(&sp2, c->vocab_size, &probe, err, sizeof err), err);
    for (int i = 0; i < 6; i++) pl_sampler_sample(probe, lg); /* in step with smp_b[2] */
    int off0 = pl_kv_seq_offset(&sb[0]);
    toks[0] = c->vocab_size;
    for (int s = 0; s < S; s++) pos[s] = pl_kv_seq_offset(&sb[s]);
    pl_forward_batch bad = {S, toks, one, pos, pb_, NULL, 0};
    CHECK_ERR(pl_model_forward_sample(m, &bad, smp_b, got, err, sizeof err), PL_ERR_INVALID, "tokens[0]", err);
    CHECK(pl_kv_seq_offset(&sb[0]) == off0);
    CHECK(pl_sampler_sample(probe, lg) == pl_sampler_sample(smp_b[2], lg));
    bad.all_logits = 1;
    CHECK_ERR(pl_model_forward_sample(m, &bad, smp_b, got, err, sizeof err), PL_ERR_INVALID, "all_logits", err);
    pl_sampler_free(probe);
    for (int s = 0; s < S; s++) {
        pl_kv_seq_destroy(&sa[s]);
        pl_kv_seq_destroy(&sb[s]);
        pl_sampler_free(smp_a[s]);
        pl_sampler_free(smp_b[s]);
    }
    pl_kv_pools_destroy(&pa);
    pl_kv_pools_destroy(&pb);
    free(lg);
    pl_model_free(m);
}

int main(void) {
    test_matmul_kernels();
    test_swiglu();
    test_sampler();
    test_errors();
    test_forward_mode(PL_F32, "tiny");
    test_forward_mode(PL_BF16, "tiny");
    test_batch(PL_F32);
    test_batch(PL_BF16);
    test_forward_sample(PL_F32);
    test_forward_sample(PL_BF16);
    TEST_END();
}
