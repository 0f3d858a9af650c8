/* CUDA paged attention against the CPU REFERENCE schedule on identical inputs: the seed
 * fixtures, invalid metadata, a randomized differential test (page sizes 1..256, query_len
 * 1..300, GQA 1..8, inactive rows, both dtypes, every kernel family, NaN in every unread
 * byte), the batch K/V append kernel and CUDA-graph capture. The problems come from the CPU
 * tests' generator (attn_testlib.h). Exits 77 (skip) without a GPU.
 * PL_CUDA_TEST_QUICK=1 keeps only a few random cases (for compute-sanitizer runs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PL_HAVE_CUDA
int main(void) {
    printf("SKIP: pagellm built without CUDA\n");
    return 77;
}
#else
#include <cuda_runtime.h>

#include "attn_testlib.h"
#include "test_util.h"

#include "pagellm/cuda.h"

#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static pl_mt19937 rng; /* every random choice of the test; seeded in main */
static int rint_(int lo, int hi) { return (int)pl_mt_randint(&rng, lo, hi); }

/* A problem from the shared generator (pages shuffled, NaN in every byte attention must not
 * read, inactive rows' queries included) with 1-3 unlisted pages, 0-2 padding table slots
 * and the default or a random scale. */
static void make_prob(at_problem *p, pl_dtype dt, int B, int Hq, int Hkv, int L, int D, int ps, int causal,
                      const int *ctxs) {
    const int extra_pages = rint_(1, 3), extra_slots = rint_(0, 2);
    at_build(p, dt, B, Hq, Hkv, L, D, ps, ctxs, causal, extra_pages, extra_slots, pl_mt_next_u32(&rng));
    p->a.scale = rint_(0, 1) ? 0.f : 0.05f + (float)rint_(0, 99) / 400.0f;
}

static void *dev_copy(const void *h, size_t bytes) {
    void *d = NULL;
    CK(cudaMalloc(&d, bytes ? bytes : 16));
    if (bytes) CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

typedef struct dev_prob {
    void *q, *k, *v, *out;
    int32_t *bt, *ctx;
} dev_prob;

static void dev_upload(const at_problem *p, dev_prob *d) {
    const size_t es = at_esize(p->a.dtype);
    d->q = dev_copy(p->q, p->q_elems * es);
    d->k = dev_copy(p->k, p->page_elems * es);
    d->v = dev_copy(p->v, p->page_elems * es);
    CK(cudaMalloc(&d->out, p->q_elems * es));
    d->bt = dev_copy(p->bt, (size_t)p->a.batch * p->a.max_pages * sizeof(int32_t));
    d->ctx = dev_copy(p->ctx, (size_t)p->a.batch * sizeof(int32_t));
}

static void dev_free(dev_prob *d) {
    cudaFree(d->q);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->out);
    cudaFree(d->bt);
    cudaFree(d->ctx);
}

/* The problem's arguments on its device copies (AUTO schedule). */
static pl_paged_attention_args dev_args(const at_problem *p, const dev_prob *d) {
    pl_paged_attention_args a = p->a;
    a.query = d->q;
    a.key_pages = d->k;
    a.value_pages = d->v;
    a.block_table = d->bt;
    a.context_lens = d->ctx;
    a.out = d->out;
    a.schedule = PL_ATTN_AUTO;
    return a;
}

/* Runs the GPU operator (out poisoned with NaN first) and compares with ref; returns max err. */
static double run_and_compare(const at_problem *p, const dev_prob *d, const float *ref, const pl_cuda_attn_options *opt,
                              const char *label) {
    const pl_paged_attention_args *pa = &p->a;
    const size_t nq = p->q_elems, es = at_esize(pa->dtype);
    CK(cudaMemset(d->out, 0xff, nq * es)); /* all-ones bits: NaN in both dtypes */
    pl_paged_attention_args a = dev_args(p, d);
    char err[256] = "";
    int rc = pl_paged_attention_cuda_ex(&a, opt, NULL, err, sizeof err);
    CHECK_MSG(rc == PL_OK, "%s: status %d: %s", label, rc, err);
    if (rc != PL_OK) return 1e30;
    CK(cudaDeviceSynchronize());
    void *h = malloc(nq * es);
    CK(cudaMemcpy(h, d->out, nq * es, cudaMemcpyDeviceToHost));
    double maxerr = 0, maxref = 0;
    int bad = 0;
    size_t first_bad = 0;
    for (size_t i = 0; i < nq; ++i) {
        const float g = at_get(h, pa->dtype, i);
        const double r = ref[i];
        const double e = fabs((double)g - r);
        if (fabs(r) > maxref) maxref = fabs(r);
        if (!(e <= maxerr)) maxerr = e; /* NaN sticks */
        const double tol = pa->dtype == PL_BF16 ? 2e-2 + 2e-2 * fabs(r) : 2e-5 + 1e-5 * fabs(r);
        if (!(e <= tol)) {
            if (!bad) first_bad = i;
            bad++;
        }
    }
    CHECK_MSG(bad == 0, "%s: %d of %zu outputs off (first at %zu), max err %g, max |ref| %g [B%d Hq%d Hkv%d L%d D%d ps%d P%d causal%d %s]",
              label, bad, nq, first_bad, maxerr, maxref, pa->batch, pa->num_heads, pa->num_kv_heads, pa->query_len,
              pa->head_dim, pa->page_size, pa->num_pages, pa->causal, pa->dtype == PL_BF16 ? "bf16" : "f32");
    free(h);
    return maxerr;
}

/* The options ask for what the shape cannot take: PL_ERR_UNSUPPORTED, the message naming `what`. */
static void expect_refused(const at_problem *p, const dev_prob *d, const pl_cuda_attn_options *o, const char *what, const char *label) {
    pl_paged_attention_args a = dev_args(p, d);
    char e2[256] = "";
    const int rc = pl_paged_attention_cuda_ex(&a, o, NULL, e2, sizeof e2);
    CHECK_MSG(rc == PL_ERR_UNSUPPORTED && strstr(e2, what) != NULL, "%s: status %d (%s), want PL_ERR_UNSUPPORTED naming %s", label, rc, e2,
              what);
}

static void check_all_kernels(const at_problem *p, const char *label, int quick) {
    char err[256];
    float *ref = at_reference_f32(p, err, sizeof err);
    CHECK_MSG(ref != NULL, "%s: CPU reference failed: %s", label, err);
    if (!ref) return;
    dev_prob d;
    dev_upload(p, &d);
    char lab[160];
    pl_cuda_attn_options o;
    memset(&o, 0, sizeof o);
    snprintf(lab, sizeof lab, "%s/auto", label);
    run_and_compare(p, &d, ref, NULL, lab);
    if (!quick) {
        o.kernel = PL_CUDA_ATTN_GENERIC;
        o.num_splits = rint_(0, 5);
        snprintf(lab, sizeof lab, "%s/generic splits %d", label, o.num_splits);
        run_and_compare(p, &d, ref, &o, lab);
        const pl_dtype dt = p->a.dtype;
        const int D = p->a.head_dim;
        const int vec_ok = (dt == PL_BF16 && (D == 128 || D == 64)) || (dt == PL_F32 && D == 128);
        if (vec_ok) {
            o.kernel = PL_CUDA_ATTN_VECTOR;
            o.num_splits = rint_(0, 7);
            snprintf(lab, sizeof lab, "%s/vector splits %d", label, o.num_splits);
            run_and_compare(p, &d, ref, &o, lab);
        }
        if (dt == PL_BF16 && D == 128) {
            o.kernel = PL_CUDA_ATTN_DECODE_MMA;
            o.num_splits = rint_(0, 9);
            snprintf(lab, sizeof lab, "%s/decode-mma splits %d", label, o.num_splits);
            run_and_compare(p, &d, ref, &o, lab);
            o.mma_warps = rint_(0, 1) ? 4 : 8; /* both CTA widths (AUTO picks 8 warps for few units) */
            snprintf(lab, sizeof lab, "%s/decode-mma %d warps, splits %d", label, o.mma_warps, o.num_splits);
            run_and_compare(p, &d, ref, &o, lab);
            /* both K/V copy kinds (AUTO picks by CTA width and range); TMA boxes need
             * page_size % 16 == 0 and are refused by name otherwise */
            o.decode_copy = 1;
            snprintf(lab, sizeof lab, "%s/decode-mma cp.async %d warps, splits %d", label, o.mma_warps, o.num_splits);
            run_and_compare(p, &d, ref, &o, lab);
            o.decode_early_kv = 1; /* old keys' stages before the PDL wait (the caller's promise holds here) */
            snprintf(lab, sizeof lab, "%s/decode-mma cp.async, old keys early, %d warps, splits %d", label, o.mma_warps, o.num_splits);
            run_and_compare(p, &d, ref, &o, lab);
            o.decode_early_kv = 0;
            o.decode_copy = 2;
            if (p->a.page_size % 16 == 0) {
                snprintf(lab, sizeof lab, "%s/decode-mma tma %d warps, splits %d", label, o.mma_warps, o.num_splits);
                run_and_compare(p, &d, ref, &o, lab);
                o.decode_early_kv = 1;
                snprintf(lab, sizeof lab, "%s/decode-mma tma, old keys early, %d warps, splits %d", label, o.mma_warps, o.num_splits);
                run_and_compare(p, &d, ref, &o, lab);
                o.decode_early_kv = 0;
            } else {
                snprintf(lab, sizeof lab, "%s: forced TMA at page_size %d", label, p->a.page_size);
                expect_refused(p, &d, &o, "decode_copy", lab);
            }
            /* several work units per CTA, each warp's stream running on into the next unit
             * (AUTO does this past one wave of CTAs, which these small shapes do not reach):
             * 4-warp CTAs, at most 8 query rows per KV head, else refused by name */
            o.decode_copy = rint_(0, 1);
            o.mma_warps = 4;
            o.num_splits = rint_(0, 5);
            o.decode_units_per_cta = rint_(2, 5);
            o.decode_early_kv = rint_(0, 1);
            if (p->a.num_heads / p->a.num_kv_heads * p->a.query_len <= 8) {
                snprintf(lab, sizeof lab, "%s/decode-mma %d units per CTA, %s%s, splits %d", label, o.decode_units_per_cta,
                         o.decode_copy ? "cp.async" : "AUTO copies", o.decode_early_kv ? ", old keys early" : "", o.num_splits);
                run_and_compare(p, &d, ref, &o, lab);
                /* the ranking sent from the host as pl_cuda_attn_rank wrote it (no ranking in the
                 * kernel), then any order of the sequences sent the same way: each rank's row,
                 * context and sequence go together */
                const int B = p->a.batch, mp = p->a.max_pages;
                const size_t nr = (size_t)B * (mp + 2);
                int32_t *hr = malloc(sizeof(int32_t) * nr), *ctx_r = hr + (size_t)B * mp, *seq_r = ctx_r + B;
                CHECK_MSG(hr && pl_cuda_attn_rank(B, mp, p->bt, p->ctx, hr) == nr, "%s: pl_cuda_attn_rank", label);
                for (int r = 1; r < B; ++r) /* falling contexts, ties by sequence */
                    CHECK_MSG(ctx_r[r - 1] > ctx_r[r] || (ctx_r[r - 1] == ctx_r[r] && seq_r[r - 1] < seq_r[r]), "%s: rank %d out of order",
                              label, r);
                for (int shuffled = 0; shuffled < 2; ++shuffled) {
                    if (shuffled) {
                        for (int r = B - 1; r > 0; --r) {
                            const int j = rint_(0, r), t0 = seq_r[r];
                            seq_r[r] = seq_r[j], seq_r[j] = t0;
                        }
                        for (int r = 0; r < B; ++r) {
                            ctx_r[r] = p->ctx[seq_r[r]];
                            memcpy(hr + (size_t)r * mp, p->bt + (size_t)seq_r[r] * mp, sizeof(int32_t) * mp);
                        }
                    }
                    int32_t *dr = dev_copy(hr, sizeof(int32_t) * nr);
                    o.decode_ranked = dr;
                    snprintf(lab, sizeof lab, "%s/decode-mma %d units per CTA, %s on the host, splits %d", label, o.decode_units_per_cta,
                             shuffled ? "shuffled" : "ranked", o.num_splits);
                    run_and_compare(p, &d, ref, &o, lab);
                    o.decode_ranked = NULL;
                    cudaFree(dr);
                }
                free(hr);
                /* runs of consecutive units; every grid-th unranked; ranked forward; reversed unranked */
                for (int ord = 1; ord <= 4; ++ord) {
                    o.decode_units_order = ord;
                    snprintf(lab, sizeof lab, "%s/decode-mma %d units per CTA, order %d, splits %d", label, o.decode_units_per_cta, ord,
                             o.num_splits);
                    run_and_compare(p, &d, ref, &o, lab);
                }
                o.decode_units_order = 0;
            } else {
                snprintf(lab, sizeof lab, "%s: %d units per CTA at %d rows", label, o.decode_units_per_cta,
                         p->a.num_heads / p->a.num_kv_heads * p->a.query_len);
                expect_refused(p, &d, &o, "decode_units_per_cta", lab);
            }
            o.decode_units_per_cta = 0;
            o.decode_early_kv = 0;
            o.decode_copy = 0;
            o.mma_warps = 0;
            /* the split count from the step's own contexts (host_context_lens, 4-warp CTAs):
             * whatever count it picks, the reference's outputs */
            o.host_context_lens = p->ctx;
            o.decode_early_kv = 1;
            snprintf(lab, sizeof lab, "%s/decode-mma splits from the contexts", label);
            run_and_compare(p, &d, ref, &o, lab);
            o.host_context_lens = NULL;
            o.decode_early_kv = 0;
            /* the fused q/k norm + RoPE + K/V append (test_cuda_backend runs it): one query row
             * and at most 16 query heads per KV head, else refused by name; its arrays must be
             * set, and the check launches nothing */
            {
                pl_cuda_attn_rope rp;
                memset(&rp, 0, sizeof rp);
                o.rope = &rp;
                pl_paged_attention_args a = dev_args(p, &d);
                char e2[256] = "";
                if (p->a.query_len != 1 || p->a.num_heads / p->a.num_kv_heads > 16) {
                    snprintf(lab, sizeof lab, "%s: fused rope at query_len %d, %d heads per KV head", label, p->a.query_len,
                             p->a.num_heads / p->a.num_kv_heads);
                    expect_refused(p, &d, &o, "rope", lab);
                } else {
                    CHECK_ERR(pl_cuda_attn_check(&a, &o, e2, sizeof e2), PL_ERR_INVALID, "rope: qkv", e2);
                }
                o.rope = NULL;
                CHECK_OK(pl_cuda_attn_check(&a, &o, e2, sizeof e2), e2);
            }
            o.kernel = PL_CUDA_ATTN_MMA;
            o.num_splits = 0;
            o.mma_warps = 4;
            snprintf(lab, sizeof lab, "%s/mma4", label);
            run_and_compare(p, &d, ref, &o, lab);
            o.mma_warps = 8;
            snprintf(lab, sizeof lab, "%s/mma8", label);
            run_and_compare(p, &d, ref, &o, lab);
            static const int shapes[] = {32, 104, 108, 132};
            for (int k = 0; k < 4; ++k) {
                o.mma_warps = shapes[k];
                snprintf(lab, sizeof lab, "%s/mma shape %d", label, shapes[k]);
                run_and_compare(p, &d, ref, &o, lab);
            }
        }
    }
    dev_free(&d);
    free(ref);
}

/* Seed fixtures (spec 6.2 / 6.3), with the page ids the sequence cache would produce. */
static void fixtures(void) {
    at_problem p;
    /* Day 4 task 1: page 4, f32, Hkv 2, D 4, GQA 2, L 3, ctx 6, table [[0,1]] */
    {
        int ctx[1] = {6};
        make_prob(&p, PL_F32, 1, 4, 2, 3, 4, 4, 1, ctx);
        check_all_kernels(&p, "day4 task1", 0);
        at_free(&p);
    }
    /* Day 4 task 2: 3 slots, the middle one empty: ctx [4, 0, 7], page 4 */
    {
        int ctx[3] = {4, 0, 7};
        make_prob(&p, PL_F32, 3, 4, 2, 1, 4, 4, 1, ctx);
        check_all_kernels(&p, "day4 task2", 0);
        at_free(&p);
    }
    /* Day 4 bf16 decode: page 32, D 128, Hq 8 / Hkv 2, 65 tokens on pages 0, 1, 3 */
    {
        int ctx[1] = {65};
        make_prob(&p, PL_BF16, 1, 8, 2, 1, 128, 32, 1, ctx);
        const int32_t ids[3] = {0, 1, 3};
        at_move_pages(&p, 0, ids);
        check_all_kernels(&p, "day4 bf16 decode", 0);
        at_free(&p);
    }
    /* Day 5: L 9 (ctx 73) and L 65 (ctx 129), page 32, Hq 4 / Hkv 2, causal, noncontiguous */
    for (int t = 0; t < 2; ++t) {
        int ctx[1] = {t ? 129 : 73};
        make_prob(&p, PL_BF16, 1, 4, 2, t ? 65 : 9, 128, 32, 1, ctx);
        check_all_kernels(&p, t ? "day5 L65" : "day5 L9", 0);
        at_free(&p);
    }
    /* more work units than two 4-warp CTAs per SM hold (70 sequences x 8 KV heads), so AUTO
     * gives each CTA several in a row; query_len 2 keeps 8 rows per KV head, 3 makes 12 (one
     * unit per CTA again); contexts 0-300, page 16 */
    for (int L = 1; L <= 3; ++L) {
        int ctx[70];
        for (int b = 0; b < 70; ++b) ctx[b] = rint_(0, 9) == 0 ? 0 : rint_(L, 300);
        make_prob(&p, PL_BF16, 70, 32, 8, L, 128, 16, 1, ctx);
        char lab[48];
        snprintf(lab, sizeof lab, "70 sequences, L%d", L);
        check_all_kernels(&p, lab, 0);
        at_free(&p);
    }
    /* 64 equal contexts (every rank a tie, broken by sequence) and 40 in three values */
    for (int t = 0; t < 2; ++t) {
        int ctx[64];
        const int n = t ? 40 : 64;
        for (int b = 0; b < n; ++b) ctx[b] = t ? 100 + 37 * (b % 3) : 200;
        make_prob(&p, PL_BF16, n, 32, 8, 1, 128, 16, 1, ctx);
        check_all_kernels(&p, t ? "40 sequences, three contexts" : "64 equal contexts", 0);
        at_free(&p);
    }
    /* contexts as unequal as a serving batch gets: every 9th sequence 1500-3000 keys, the rest
     * 0-40 (AUTO: several units per CTA, most of them empty or short) */
    {
        int ctx[200];
        for (int b = 0; b < 200; ++b) ctx[b] = b % 9 == 4 ? rint_(1500, 3000) : rint_(0, 40);
        make_prob(&p, PL_BF16, 200, 32, 8, 1, 128, 16, 1, ctx);
        check_all_kernels(&p, "200 unequal sequences", 0);
        at_free(&p);
    }
    /* past 256 sequences the decode kernel no longer ranks them by context: its units go every
     * grid-th in sequence order */
    {
        int ctx[300];
        for (int b = 0; b < 300; ++b) ctx[b] = rint_(0, 60);
        make_prob(&p, PL_BF16, 300, 32, 8, 1, 128, 16, 1, ctx);
        check_all_kernels(&p, "300 sequences", 1);
        at_free(&p);
    }
    /* context inside one page; D 32 generic bf16 decode */
    {
        int ctx[2] = {5, 17};
        make_prob(&p, PL_BF16, 2, 8, 2, 1, 32, 64, 1, ctx);
        check_all_kernels(&p, "one page, D32", 0);
        at_free(&p);
    }
}

static void invalid_metadata(void) {
    /* pages (3, 2, 32, D), one row; each case corrupts the table or context */
    struct {
        int ctx, mp;
        int32_t bt[4];
        const char *want;
    } cases[] = {
        {-1, 3, {-1, -1, -1}, "nonnegative"},
        {97, 3, {0, 1, 2}, "not covered"},
        {65, 2, {0, 1}, "not covered"},
        {40, 3, {0, -1, -1}, "outside physical page storage"},
        {40, 3, {0, 3, -1}, "outside physical page storage"},
        {40, 3, {1, 1, -1}, "aliased"},
        {40, 3, {0, 1, -2}, "-1 sentinel"},
        {40, 3, {0, 1, 2}, "-1 sentinel"},
    };
    const int Ls[3] = {1, 9, 65};
    for (int li = 0; li < 3; ++li) {
        const int L = Ls[li], D = li == 0 ? 4 : 128;
        const pl_dtype dt = li == 0 ? PL_F32 : PL_BF16;
        /* a valid base problem with 3 pages and 3 table slots; the cases overwrite table and context */
        const int ctx0 = L > 64 ? 65 : 40, spare = 3 - (ctx0 + 31) / 32;
        at_problem p;
        at_build(&p, dt, 1, 2, 2, L, D, 32, &ctx0, 1, spare, spare, 7);
        dev_prob d;
        dev_upload(&p, &d);
        char err[256];
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            int ctx = cases[c].ctx; /* entry errors come before the query-length rule */
            CK(cudaMemcpy(d.bt, cases[c].bt, (size_t)cases[c].mp * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(d.ctx, &ctx, 4, cudaMemcpyHostToDevice));
            pl_paged_attention_args a = dev_args(&p, &d);
            a.max_pages = cases[c].mp;
            CHECK_ERR(pl_paged_attention_cuda_validate(&a, NULL, err, sizeof err), PL_ERR_INVALID, cases[c].want, err);
        }
        /* active context shorter than the query */
        if (L > 1) {
            pl_paged_attention_args a = dev_args(&p, &d);
            a.causal = 0;
            /* ctx L-1 needs ceil((L-1)/32) pages; pad the rest with -1 so only the length rule fires */
            int ctx = L - 1;
            int32_t bt[3] = {-1, -1, -1};
            for (int i = 0; i < (ctx + 31) / 32; ++i) bt[i] = i;
            CK(cudaMemcpy(d.bt, bt, sizeof bt, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(d.ctx, &ctx, 4, cudaMemcpyHostToDevice));
            CHECK_ERR(pl_paged_attention_cuda_validate(&a, NULL, err, sizeof err), PL_ERR_INVALID, "must be zero or at least query length", err);
            a.page_size = 0;
            CHECK_ERR(pl_paged_attention_cuda(&a, NULL, err, sizeof err), PL_ERR_INVALID, "positive integer", err);
            a.page_size = 32;
            a.schedule = PL_ATTN_DECODE; /* L > 1 here; > 8 for two of the three */
            if (L > 8) CHECK_ERR(pl_paged_attention_cuda(&a, NULL, err, sizeof err), PL_ERR_UNSUPPORTED, "query_len <= 8", err);
            a.schedule = PL_ATTN_AUTO;
            a.num_heads = 3;
            CHECK_ERR(pl_paged_attention_cuda(&a, NULL, err, sizeof err), PL_ERR_INVALID, "num_heads", err);
        }
        dev_free(&d);
        at_free(&p);
    }
}

static void randomized(int iters) {
    const int page_sizes[] = {1, 3, 16, 32, 64, 128, 256, 7, 48, 100};
    const int dims[] = {128, 128, 128, 64, 32, 40, 96, 256};
    for (int it = 0; it < iters; ++it) {
        const pl_dtype dt = rint_(0, 2) ? PL_BF16 : PL_F32;
        const int G = rint_(1, 8), Hkv = rint_(1, 3), Hq = G * Hkv;
        const int D = dims[rint_(0, 7)];
        const int ps = rint_(0, 3) ? page_sizes[rint_(0, 9)] : rint_(1, 256);
        int L;
        switch (rint_(0, 3)) {
        case 0: L = 1; break;
        case 1: L = rint_(2, 8); break;
        case 2: L = rint_(9, 80); break;
        default: L = rint_(81, 300); break;
        }
        const int B = rint_(1, 4);
        int ctxs[4];
        /* keep the host reference cost bounded */
        const long budget = 60000000L / ((long)Hq * D * L);
        for (int b = 0; b < B; ++b) {
            if (B > 1 && rint_(0, 4) == 0) {
                ctxs[b] = 0; /* inactive row */
                continue;
            }
            long cmax = budget / B;
            if (cmax < L) cmax = L;
            if (cmax > 3000) cmax = 3000;
            ctxs[b] = L + rint_(0, (int)(cmax - L));
        }
        at_problem p;
        make_prob(&p, dt, B, Hq, Hkv, L, D, ps, rint_(0, 3) != 0, ctxs);
        char label[64];
        snprintf(label, sizeof label, "random %d", it);
        check_all_kernels(&p, label, 0);
        at_free(&p);
    }
}

static void kv_append(void) {
    for (int t = 0; t < 2; ++t) {
        const pl_dtype dt = t ? PL_BF16 : PL_F32;
        const int N = 37, Hkv = 3, D = t ? 128 : 20, ps = 8, P = 10;
        const size_t stride = (size_t)Hkv * D + (t ? 0 : 5), es = at_esize(dt);
        const size_t nk = (size_t)P * Hkv * ps * D, nt = (size_t)N * stride;
        void *k = malloc(nt * es), *v = malloc(nt * es), *kp = malloc(nk * es), *vp = malloc(nk * es);
        for (size_t i = 0; i < nt; ++i) {
            at_set(k, dt, i, (float)pl_mt_normal(&rng));
            at_set(v, dt, i, (float)pl_mt_normal(&rng));
        }
        for (size_t i = 0; i < nk; ++i) {
            at_set(kp, dt, i, 0.25f);
            at_set(vp, dt, i, 0.25f);
        }
        int32_t pid[37], slot[37];
        for (int i = 0; i < N; ++i) {
            pid[i] = i % 9 == 4 ? -1 : (i * 7) % P; /* some padding rows */
            slot[i] = (i / P) % ps;
        }
        /* expected pages: later rows win on a clash, as in the kernel only if unique: make unique */
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < i; ++j)
                if (pid[j] >= 0 && pid[j] == pid[i] && slot[j] == slot[i]) pid[i] = -1;
        unsigned char *ek = malloc(nk * es), *ev = malloc(nk * es);
        memcpy(ek, kp, nk * es);
        memcpy(ev, vp, nk * es);
        for (int i = 0; i < N; ++i) {
            if (pid[i] < 0) continue;
            for (int h = 0; h < Hkv; ++h) {
                const size_t dst = (((size_t)pid[i] * Hkv + h) * ps + slot[i]) * D, src = (size_t)i * stride + (size_t)h * D;
                memcpy(ek + dst * es, (const unsigned char *)k + src * es, D * es);
                memcpy(ev + dst * es, (const unsigned char *)v + src * es, D * es);
            }
        }
        void *dk = dev_copy(k, nt * es), *dv = dev_copy(v, nt * es), *dkp = dev_copy(kp, nk * es), *dvp = dev_copy(vp, nk * es);
        int32_t *dpid = dev_copy(pid, sizeof pid), *dslot = dev_copy(slot, sizeof slot);
        char err[256];
        CHECK_OK(pl_kv_append_cuda(dt, N, Hkv, D, ps, P, dk, dv, t ? 0 : stride, dpid, dslot, dkp, dvp, NULL, err, sizeof err), err);
        CK(cudaMemcpy(kp, dkp, nk * es, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(vp, dvp, nk * es, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (size_t i = 0; i < nk; ++i)
            if (at_get(kp, dt, i) != at_get(ek, dt, i) || at_get(vp, dt, i) != at_get(ev, dt, i)) bad++;
        CHECK_MSG(bad == 0, "kv append %s: %d elements differ", dt == PL_BF16 ? "bf16" : "f32", bad);
        CHECK_ERR(pl_kv_append_cuda(dt, N, Hkv, D, 0, P, dk, dv, 0, dpid, dslot, dkp, dvp, NULL, err, sizeof err), PL_ERR_INVALID, "page_size", err);
        cudaFree(dk);
        cudaFree(dv);
        cudaFree(dkp);
        cudaFree(dvp);
        cudaFree(dpid);
        cudaFree(dslot);
        free(k);
        free(v);
        free(kp);
        free(vp);
        free(ek);
        free(ev);
    }
}

/* A decode step with splits (workspace from the stream-ordered allocator) captured in a graph. */
static void graph_capture(void) {
    int ctxs[2] = {3000, 1111};
    at_problem p;
    make_prob(&p, PL_BF16, 2, 8, 2, 1, 128, 128, 1, ctxs);
    char err[256];
    float *ref = at_reference_f32(&p, err, sizeof err);
    CHECK_MSG(ref != NULL, "graph capture: CPU reference failed: %s", err);
    if (!ref) {
        at_free(&p);
        return;
    }
    dev_prob d;
    dev_upload(&p, &d);
    const size_t nq = p.q_elems;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pl_paged_attention_args a = dev_args(&p, &d);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int rc = pl_paged_attention_cuda(&a, s, err, sizeof err);
    CK(cudaStreamEndCapture(s, &g));
    CHECK_MSG(rc == PL_OK, "capture: %s", err);
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaMemsetAsync(d.out, 0xff, nq * 2, s));
    for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    uint16_t *h = malloc(nq * 2);
    CK(cudaMemcpy(h, d.out, nq * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (size_t i = 0; i < nq; ++i) {
        const double e = fabs((double)pl_bf16_to_f32(h[i]) - ref[i]);
        if (!(e <= 2e-2 + 2e-2 * fabs(ref[i]))) bad++;
    }
    CHECK_MSG(bad == 0, "graph replay: %d outputs off", bad);
    free(h);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    dev_free(&d);
    free(ref);
    at_free(&p);
}

/* A Qwen3-4B decode step's attention arguments (32 heads, 8 KV heads, 128-token pages) and
 * DECODE_MMA options with 4-warp CTAs, for plan queries: pointers only (nothing launched). */
static void plan_args(int batch, int max_pages, pl_paged_attention_args *a, pl_cuda_attn_options *o) {
    static _Alignas(16) int32_t dummy[64]; /* 16-byte aligned, as the MMA kernels need */
    memset(a, 0, sizeof *a);
    a->dtype = PL_BF16, a->batch = batch, a->num_heads = 32, a->num_kv_heads = 8, a->query_len = 1, a->head_dim = 128;
    a->page_size = 128, a->max_pages = max_pages, a->num_pages = 256, a->causal = 1, a->schedule = PL_ATTN_AUTO;
    a->query = a->key_pages = a->value_pages = a->out = dummy;
    a->block_table = a->context_lens = dummy;
    memset(o, 0, sizeof *o);
    o->kernel = PL_CUDA_ATTN_DECODE_MMA;
    o->decode_early_kv = 1; /* 4-warp CTAs */
}

/* pl_cuda_attn_options.host_context_lens picks the split count from the contexts, read off the
 * workspace it asks for (shapes and host memory only, nothing launched): a batch-4 Qwen3-4B decode
 * step (32 heads, 8 KV heads, 128-token pages, an 8-page table, 4-warp CTAs) on an H200-sized GPU
 * (128-159 SMs) takes 6 splits of 192 keys at contexts of 640 (128 units that hold keys), where the
 * shape heuristic takes 8 of 128 (192 such units); 8 at 256 and at 0; batch 16 keeps the
 * heuristic's count (no count of at most 256 keys fits one wave there). */
static void split_rule(void) {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (int B = 4; B <= 16; B += 12) {
        pl_paged_attention_args a;
        pl_cuda_attn_options o;
        plan_args(B, 8, &a, &o);
        const size_t per_split = (size_t)B * 32 * (128 + 2) * sizeof(float), heur = pl_cuda_attn_workspace_bytes(&a, &o);
        int32_t ctx[16];
        const int lens[3] = {640, 256, 0};
        for (int i = 0; i < 3; ++i) {
            for (int b = 0; b < B; ++b) ctx[b] = lens[i];
            o.host_context_lens = ctx;
            const size_t ws = pl_cuda_attn_workspace_bytes(&a, &o);
            CHECK_MSG(ws > 0 && ws % per_split == 0, "split rule: batch %d, contexts %d: workspace %zu bytes", B, lens[i], ws);
            if (B == 16) CHECK_MSG(ws == heur, "split rule: batch 16, contexts %d: %zu splits, want the heuristic's %zu", lens[i], ws / per_split, heur / per_split);
            else if (sms >= 128 && sms < 160) {
                const size_t want = lens[i] == 640 ? 6 : 8;
                CHECK_MSG(ws == want * per_split && heur == 8 * per_split, "split rule: batch 4, contexts %d: %zu splits (heuristic %zu), want %zu (8)",
                          lens[i], ws / per_split, heur / per_split, want);
            }
        }
    }
    /* the plan query at batch 4 over a 16-page table (2048 keys): 8 splits of 256, 256 one-unit
     * CTAs at contexts 500-1100 and at 1100 each */
    {
        pl_paged_attention_args a;
        pl_cuda_attn_options o;
        plan_args(4, 16, &a, &o);
        const int32_t unequal[4] = {500, 700, 900, 1100}, equal[4] = {1100, 1100, 1100, 1100};
        char e2[256] = "";
        for (int u = 0; u < 2; ++u) {
            o.host_context_lens = u ? equal : unequal;
            pl_cuda_attn_kernel k = PL_CUDA_ATTN_AUTO;
            int splits = 0, ctas = 0, upc = 0;
            CHECK_OK(pl_cuda_attn_plan_info(&a, &o, &k, &splits, &ctas, &upc, e2, sizeof e2), e2);
            if (sms >= 128 && sms < 160)
                CHECK_MSG(k == PL_CUDA_ATTN_DECODE_MMA && splits == 8 && upc == 1 && ctas == 256,
                          "plan: %s contexts: kernel %d, %d splits, %d CTAs, %d units per CTA (want 8, 256, 1)", u ? "equal" : "unequal",
                          (int)k, splits, ctas, upc);
        }
        o.host_context_lens = NULL;
        a.batch = 0; /* the query reports the check's error and writes nothing */
        int splits = -7;
        CHECK_ERR(pl_cuda_attn_plan_info(&a, &o, NULL, &splits, NULL, NULL, e2, sizeof e2), PL_ERR_INVALID, "batch", e2);
        int32_t one = 0, out[3] = {7, 7, 7};
        CHECK_MSG(pl_cuda_attn_rank(0, 1, &one, &one, out) == 0 && pl_cuda_attn_rank(1, 1, NULL, &one, out) == 0 && out[0] == 7,
                  "pl_cuda_attn_rank: bad arguments must write nothing");
        CHECK_MSG(splits == -7, "plan_info wrote splits %d on an error", splits);
    }
}

int main(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    const char *qs = getenv("PL_CUDA_TEST_QUICK");
    const int quick = qs && atoi(qs) > 0;
    const char *is = getenv("PL_CUDA_TEST_ITERS");
    const int iters = is ? atoi(is) : quick ? 3 : 60;
    pl_mt_seed(&rng, 20260611);
    fixtures();
    invalid_metadata();
    split_rule();
    kv_append();
    graph_capture();
    randomized(iters);
    TEST_END();
}
#endif
