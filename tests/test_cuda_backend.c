/* The CUDA backend against the CPU backend, op by op, on random inputs with odd sizes (a
 * ggml-style backend test): weights (upload, row read-back), matmul (act and f32 output,
 * device and host destinations), embedding, RMSNorm, RoPE table, q/k norm + RoPE, SwiGLU,
 * add, row copies, K/V append + paged attention through device page pools (growth copies
 * checked byte for byte against host pools), the deferred q/k norm + RoPE fused with the
 * K/V appends of its rows (and its fallbacks), the greedy head (LM head + argmax, against
 * pl_argmax of the same kernel's logits), device sampling against src/model/sampler.c draw
 * for draw, the KV budget helper, and the error paths (bad arguments, out of memory,
 * nothing leaked), and a decode batch's MLP as the fused kernel against the three kernels. Exits
 * 77 (skip) without CUDA or a GPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Without a GPU (or without CUDA) the entry points say so clearly; checked before skipping. */
#include "base/bf16.h"
#include "cuda/backend_cuda.h"
#include "model/model_internal.h"
#include "pagellm/model.h"
/* The host packing helper (OpenMP, no device): parts stacked, f32 and bf16. */
static int pack_checks(void) {
    float a[3 * 6], b[2 * 6], f[5 * 6], row[6];
    uint16_t h[5 * 6];
    for (int i = 0; i < 18; i++) a[i] = (float)i * 0.37f - 2.0f;
    for (int i = 0; i < 12; i++) b[i] = (float)i * -1.13f + 0.5f;
    pl_weight_src sa = {PL_SRC_F32, 3, 6, a, NULL, 0, 0, 0}, sb = {PL_SRC_F32, 2, 6, b, NULL, 0, 0, 0};
    const pl_weight_src *parts[2] = {&sa, &sb};
    if (pl_cuda_pack_rows(parts, 2, 0, 5, 6, 0, f) != PL_OK || pl_cuda_pack_rows(parts, 2, 1, 4, 6, 1, h) != PL_OK) return 1;
    for (int r = 0; r < 5; r++) {
        pl_weight_src_row(r < 3 ? &sa : &sb, r < 3 ? r : r - 3, row);
        for (int k = 0; k < 6; k++) {
            if (f[r * 6 + k] != row[k]) return 1;
            if (r >= 1 && h[(r - 1) * 6 + k] != pl_f32_to_bf16(row[k])) return 1;
        }
    }
    return 0;
}

static int no_gpu_checks(const char *want) {
    char e[512];
    int pages = 0, bad = 0;
    if (pack_checks()) bad |= 16;
    pl_model *m = NULL;
    pl_model_options o = {PL_BF16, PL_DEVICE_CUDA, 1, 0, 0};
    if (pl_cuda_device_check(e, sizeof e) != PL_ERR_UNSUPPORTED || !strstr(e, want)) bad |= 1;
    if (pl_model_create_synthetic("tiny", 1, &o, &m, e, sizeof e) != PL_ERR_UNSUPPORTED || m || !strstr(e, want)) bad |= 2;
    if (pl_cuda_kv_budget_pages(1 << 20, 64, 0, 0, &pages, e, sizeof e) != PL_OK || pages != 64) bad |= 4; /* MiB: no device */
    if (pl_cuda_kv_budget_pages(1 << 20, 0, 0.5, 0, &pages, e, sizeof e) != PL_ERR_UNSUPPORTED) bad |= 8;
    if (bad) fprintf(stderr, "no-GPU error paths: failure mask %d (last message: %s)\n", bad, e);
    return bad;
}

#ifndef PL_HAVE_CUDA
int main(void) {
    if (no_gpu_checks("without CUDA")) return 1;
    printf("SKIP: pagellm built without CUDA\n");
    return 77;
}
#else
#include <cuda_runtime.h>

#include "test_util.h"

#include "base/bf16.h"
#include "base/rng.h"
#include "cuda/backend_cuda.h"
#include "cuda/mlp_cuda.h"
#include "model/model_internal.h"
#include "pagellm/model.h"

static char err[512];
static uint64_t rs = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 11);
}
static float runif(void) { return (float)(rnd() % 2000001) / 1000000.0f - 1.0f; }

typedef struct pair {
    pl_dtype dt;
    pl_cpu_backend cpu;
    const pl_backend_ops *co, *go;
    pl_cuda_backend *g;
    cudaStream_t st;
} pair;

static size_t esz(pl_dtype t) { return t == PL_F32 ? 4 : 2; }

/* n random values, rounded to the act dtype so both backends see the same inputs */
static float *rand_act(pl_dtype dt, size_t n, float scale) {
    float *x = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) x[i] = runif() * scale;
    if (dt == PL_BF16)
        for (size_t i = 0; i < n; i++) x[i] = pl_bf16_round(x[i]);
    return x;
}

static void *to_act(pl_dtype dt, const float *x, size_t n) {
    void *o = malloc(n * esz(dt) + 16);
    if (dt == PL_BF16)
        pl_bf16_from_f32_array(o, x, n);
    else
        memcpy(o, x, n * 4);
    return o;
}

static void from_act(pl_dtype dt, const void *p, size_t n, float *out) {
    if (dt == PL_BF16)
        pl_bf16_to_f32_array(out, p, n);
    else
        memcpy(out, p, n * 4);
}

/* device buffer through the backend holding the host bytes, with pad more bytes after them,
 * all 0xff (NaN in bf16 and f32) */
static void *dup_dev_padded(pair *p, const void *h, size_t bytes, size_t pad) {
    void *d = p->go->alloc(p->g, bytes + pad);
    CHECK(d != NULL);
    if (!d) exit(1);
    CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
    CHECK(cudaMemsetAsync((char *)d + bytes, 0xff, pad, p->st) == cudaSuccess);
    CHECK(cudaStreamSynchronize(p->st) == cudaSuccess);
    return d;
}

static void *dup_dev(pair *p, const void *h, size_t bytes) { return dup_dev_padded(p, h, bytes, 0); }

static void down(pair *p, void *h, const void *d, size_t bytes) {
    CHECK_OK(pl_cuda_backend_sync(p->g, err, sizeof err), err);
    CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, p->st) == cudaSuccess);
    CHECK(cudaStreamSynchronize(p->st) == cudaSuccess);
}

static int dev_sms(void) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess ? v : 0;
}

/* max|got - ref| <= tol * max(max|ref|, floor) */
static void cmp(const char *what, const float *got, const float *ref, size_t n, double tol, double floor_) {
    double md = 0, mr = floor_;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (!(d <= md)) md = d, worst = i;
        if (fabs(ref[i]) > mr) mr = fabs(ref[i]);
    }
    CHECK_MSG(md <= tol * mr, "%s: max|diff| %g at %zu (got %g, ref %g) > %g * %g", what, md, worst, got[worst], ref[worst],
              tol, mr);
}

static double act_tol(pl_dtype dt) { return dt == PL_BF16 ? 1.6e-2 : 2e-5; }

static void *make_weight(pair *p, int gpu, const float *w, int rows, int cols, int nparts, int is_matrix) {
    pl_weight_src src[3];
    const pl_weight_src *parts[3];
    int r0 = 0;
    for (int i = 0; i < nparts; i++) {
        int r = i == nparts - 1 ? rows - r0 : rows / nparts;
        memset(&src[i], 0, sizeof src[i]);
        src[i].dtype = PL_SRC_F32;
        src[i].rows = r;
        src[i].cols = cols;
        src[i].data = w + (size_t)r0 * cols;
        parts[i] = &src[i];
        r0 += r;
    }
    void *out = NULL;
    const pl_backend_ops *o = gpu ? p->go : p->co;
    CHECK_OK(o->weight_create(gpu ? (void *)p->g : (void *)&p->cpu, parts, nparts, is_matrix, &out, err, sizeof err), err);
    return out;
}

static void test_matmul(pair *p) {
    /* {N, K, M}: M <= 64 with K % 8 == 0 takes a skinny-GEMM kernel (bf16): odd N and K
     * tails of their k steps and tiles, and the K splits of the big shapes, are covered;
     * every shape also runs through cuBLAS. */
    static const int shapes[][3] = {{1, 2, 1},     {7, 34, 3},     {65, 130, 5},  {300, 256, 17}, {128, 1024, 64},
                                    {1000, 96, 130}, {1, 8, 1},    {37, 264, 2},  {1001, 2560, 4}, {515, 776, 8},
                                    {300, 2056, 3}, {9, 512, 5},   {13, 1032, 6}, {4099, 128, 7},
                                    {77, 1000, 12}, {2571, 40, 33}, {31, 264, 64}, {300, 2056, 9},
                                    {6144, 2560, 64}, {2560, 4096, 40}, {1000, 264, 50}, {40000, 128, 3},
                                    {19456, 2560, 4}, {2560, 9728, 16}, {2560, 4096, 4}, {2100, 1000, 3},
                                    {2560, 9728, 8},  {3000, 776, 2}};
    const size_t ns = sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < 7 * ns; s++) {
        const size_t si = s % ns;
        /* passes: default kernels (tile kernel from 2 to 64 rows), cuBLAS only, CUDA-core
         * kernel, untiled tensor-core kernel, and the tile kernel cut into the most K splits (4
         * CTAs per SM, one 64-k step each: up to 64 partials per tile up to 16 tokens, 8 in a
         * cluster past that); then the tile kernel with its stages copied by cp.async (default
         * splits) and by TMA boxes (the most splits) */
        static const int modes[7] = {1, 0, 2, 3, 1, 1, 1};
        const int pass = (int)(s / ns), gemv = modes[pass], most = pass == 4 || pass == 6;
        pl_cuda_backend_use_gemv(p->g, gemv);
        pl_cuda_backend_tune_tile(p->g, most ? 4 : 0, most ? 64 : 0, most ? 1 : 0);
        pl_cuda_backend_tile_copy(p->g, pass == 5 ? 1 : pass == 6 ? 2 : 0);
        int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2];
        float *w = rand_act(PL_F32, (size_t)N * K, 1.0f), *x = rand_act(p->dt, (size_t)M * K, 1.0f);
        int parts = N >= 3 ? 3 : 1;
        void *cw = make_weight(p, 0, w, N, K, parts, 1), *gw = make_weight(p, 1, w, N, K, parts, 1);
        if (!cw || !gw) return;
        CHECK(p->go->weight_bytes(p->g, gw) == p->co->weight_bytes(&p->cpu, cw));
        /* rows read back identically (both hold the act-dtype rounding of w) */
        float *r1 = malloc(sizeof(float) * K), *r2 = malloc(sizeof(float) * K);
        int rows_chk[3] = {0, N / 2, N - 1};
        for (int i = 0; i < 3; i++) {
            CHECK_OK(p->co->weight_row(&p->cpu, cw, rows_chk[i], r1, err, sizeof err), err);
            CHECK_OK(p->go->weight_row(p->g, gw, rows_chk[i], r2, err, sizeof err), err);
            CHECK_MSG(memcmp(r1, r2, sizeof(float) * K) == 0, "weight_row %d of [%d, %d]", rows_chk[i], N, K);
        }
        CHECK_ERR(p->go->weight_row(p->g, gw, N, r2, err, sizeof err), PL_ERR_INVALID, "outside", err);
        /* the last four shapes: 2-8 rows that the tile kernel splits over K, 16-row tiles for
         * about one wave of two CTAs per SM on the H200 (132 SMs): k-sliced tiles, no K split
         * (pass 0: AUTO, x in an 8-row allocation as the forward pass holds it; the TMA passes:
         * k-sliced tiles from 2 rows forced; N and K tails inside a TMA box). Where the backend
         * says it takes a shape, both launches below must have taken it */
        pl_cuda_backend_kslice(p->g, pass == 0 ? 0 : 2);
        const int kslice_shape = gemv == 1 && pl_cuda_backend_kslice_takes(p->g, M, N, K, pass == 0 && M < 8 ? 8 : M);
        CHECK_MSG(!(si + 4 >= ns && p->dt == PL_BF16 && (pass == 0 || pass == 4 || pass == 6) && dev_sms() == 132) || kslice_shape,
                  "matmul [%d,%d]x[%d,%d]^T pass %d: not k-sliced on a 132-SM device", M, K, N, K, pass);
        const long ks0 = pl_cuda_backend_kslice_launches(p->g);
        free(r1), free(r2);
        void *xa = to_act(p->dt, x, (size_t)M * K);
        /* pass 0: x held in an 8-row allocation below 8 rows, NaN past its M rows, so the
         * k-sliced tiles' 8-row x boxes read them (their outputs must not show them) */
        const size_t xpad = pass == 0 && M < 8 ? (size_t)(8 - M) * K * esz(p->dt) : 0;
        void *dx = dup_dev_padded(p, xa, (size_t)M * K * esz(p->dt), xpad);
        void *cout = malloc((size_t)M * N * 4), *gout = malloc((size_t)M * N * 4);
        float *cf = malloc(sizeof(float) * M * N), *gf = malloc(sizeof(float) * M * N);
        void *dout = p->go->alloc(p->g, (size_t)M * N * 4);
        char what[96];
        for (int f32 = 0; f32 < 2; f32++) {
            CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cout, f32, err, sizeof err), err);
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dout, f32, err, sizeof err), err);
            pl_dtype od = f32 ? PL_F32 : p->dt;
            down(p, gout, dout, (size_t)M * N * esz(od));
            from_act(od, cout, (size_t)M * N, cf);
            from_act(od, gout, (size_t)M * N, gf);
            snprintf(what, sizeof what, "matmul [%d,%d]x[%d,%d]^T f32out=%d gemv=%d pass %d", M, K, N, K, f32, gemv, pass);
            cmp(what, gf, cf, (size_t)M * N, od == PL_BF16 ? 1e-2 : 1e-4, 1e-3);
        }
        if (kslice_shape)
            CHECK_MSG(pl_cuda_backend_kslice_launches(p->g) - ks0 == 2, "matmul [%d,%d]x[%d,%d]^T pass %d: %ld k-sliced launches, want 2", M, K, N, K,
                      pass, pl_cuda_backend_kslice_launches(p->g) - ks0);
        /* f32 logits straight into host memory */
        memset(gf, 0xff, sizeof(float) * M * N);
        CHECK_OK(p->go->matmul(p->g, dx, M, gw, gf, 1, err, sizeof err), err);
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cf, 1, err, sizeof err), err);
        snprintf(what, sizeof what, "matmul into host [%d,%d]x[%d,%d]^T", M, K, N, K);
        cmp(what, gf, cf, (size_t)M * N, 1e-4, 1e-3);
        p->go->free(p->g, dout);
        p->go->free(p->g, dx);
        p->co->weight_free(&p->cpu, cw);
        p->go->weight_free(p->g, gw);
        free(w), free(x), free(xa), free(cout), free(gout), free(cf), free(gf);
    }
    pl_cuda_backend_use_gemv(p->g, 1);
    pl_cuda_backend_tune_tile(p->g, 0, 0, 0);
    pl_cuda_backend_tile_copy(p->g, 0);
    pl_cuda_backend_kslice(p->g, 0);
}

/* The tile GEMM's split fixup with either arrival (pl_cuda_backend_tile_fixup 1: fences, 2:
 * one acq_rel atomic): the same bits both ways (only the counting differs; an arrival that let
 * the last CTA read a partial early would not), and the CPU's product within bf16 tolerance.
 * Rows 2-16 with 5-16 K splits, several rounds, so a racing read has chances to show. */
static void test_tile_fixup(pair *p) {
    pl_cuda_backend_kslice(p->g, 1); /* the split tile kernel, not the k-sliced tiles */
    static const int shapes[][3] = {{6144, 2560, 4}, {1536, 4096, 3}, {768, 8192, 16}, {6144, 2560, 2}, {1000, 3000, 9}};
    char what[128];
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2];
        const size_t n = (size_t)M * N, e = esz(p->dt);
        float *w = rand_act(PL_F32, (size_t)N * K, 1.0f), *x = rand_act(p->dt, (size_t)M * K, 1.0f);
        void *cw = make_weight(p, 0, w, N, K, 1, 1), *gw = make_weight(p, 1, w, N, K, 1, 1);
        void *xa = to_act(p->dt, x, (size_t)M * K), *dx = dup_dev(p, xa, (size_t)M * K * e), *dy = p->go->alloc(p->g, n * e);
        unsigned char *yb[2];
        for (int mode = 0; mode < 2; mode++) {
            pl_cuda_backend_tile_fixup(p->g, mode + 1);
            yb[mode] = malloc(n * e);
            for (int round = 0; round < 3; round++) {
                CHECK(cudaMemsetAsync(dy, 0xff, n * e, p->st) == cudaSuccess); /* NaN: every element must be written */
                CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
                CHECK_OK(pl_cuda_backend_sync(p->g, err, sizeof err), err);
                unsigned char *got = malloc(n * e);
                down(p, got, dy, n * e);
                if (round == 0) memcpy(yb[mode], got, n * e);
                snprintf(what, sizeof what, "tile fixup %d [%d x %d] x [%d x %d]^T, round %d", mode + 1, M, K, N, K, round);
                CHECK_MSG(memcmp(yb[mode], got, n * e) == 0, "%s: differs from round 0", what);
                free(got);
            }
        }
        pl_cuda_backend_tile_fixup(p->g, 0);
        snprintf(what, sizeof what, "tile fixup [%d x %d] x [%d x %d]^T", M, K, N, K);
        CHECK_MSG(memcmp(yb[0], yb[1], n * e) == 0, "%s: the two arrivals give different bits", what);
        void *cy = malloc(n * e);
        float *gf = malloc(sizeof(float) * n), *cf = malloc(sizeof(float) * n);
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cy, 0, err, sizeof err), err);
        from_act(p->dt, yb[1], n, gf);
        from_act(p->dt, cy, n, cf);
        cmp(what, gf, cf, n, 1e-2, 1e-3);
        p->go->free(p->g, dx), p->go->free(p->g, dy);
        p->co->weight_free(&p->cpu, cw), p->go->weight_free(p->g, gw);
        free(cy), free(gf), free(cf), free(w), free(x), free(xa), free(yb[0]), free(yb[1]);
    }
    pl_cuda_backend_kslice(p->g, 0);
}

/* A split tile GEMM then the residual add + RMSNorm of its output: by default the GEMM leaves
 * its K-split partials and the norm kernel adds them (pl_cuda_backend_parts_norm); h, the GEMM
 * output and the norm must be the bits of the unfused pair, and near the CPU's. A GEMM followed
 * by another op (add) launches as before. */
static void test_matmul_norm(pair *p) {
    pl_cuda_backend_kslice(p->g, 1); /* the split partials' path: k-sliced tiles leave none (test_matmul covers them) */
    /* {dim (N), K, M}: 1 to 16 CTAs per row in the norm (4352: none fits, the GEMM adds its
     * partials); the last with the most splits (26 partials per column) */
    static const int shapes[][3] = {{2560, 4096, 4}, {2560, 9728, 16}, {2560, 4096, 2}, {328, 2056, 7}, {4096, 1024, 9},
                                    {1024, 3000, 5},  {2816, 1024, 3},  {4352, 512, 4},  {2560, 2560, 3}};
    const size_t ns = sizeof shapes / sizeof shapes[0];
    char what[128];
    for (size_t si = 0; si < ns; si++) {
        const int D = shapes[si][0], K = shapes[si][1], M = shapes[si][2], most = si == ns - 1;
        pl_cuda_backend_tune_tile(p->g, most ? 4 : 0, most ? 64 : 0, most ? 1 : 0);
        const size_t n = (size_t)M * D, e = 2;
        float *w = rand_act(PL_F32, (size_t)D * K, 1.0f), *x = rand_act(p->dt, (size_t)M * K, 1.0f);
        float *nw = rand_act(PL_F32, (size_t)D, 1.0f), *r = rand_act(p->dt, n, 4.0f);
        void *cw = make_weight(p, 0, w, D, K, 1, 1), *gw = make_weight(p, 1, w, D, K, 1, 1);
        void *cn = make_weight(p, 0, nw, 1, D, 1, 0), *gn = make_weight(p, 1, nw, 1, D, 1, 0);
        void *xa = to_act(p->dt, x, (size_t)M * K), *ra = to_act(p->dt, r, n);
        void *dx = dup_dev(p, xa, (size_t)M * K * e), *dh = p->go->alloc(p->g, n * e), *dy = p->go->alloc(p->g, n * e),
             *dout = p->go->alloc(p->g, n * e);
        unsigned char *hb[2], *yb[2], *ob[2];
        /* the norm takes the partials wherever its kernel fits the width (not 4352: 17 warps) */
        const long want = D == 4352 ? 0 : 1;
        for (int mode = 0; mode < 2; mode++) { /* 0: partials to the norm (default), 1: the GEMM adds them */
            pl_cuda_backend_parts_norm(p->g, mode);
            const long fused0 = pl_cuda_backend_parts_fused(p->g);
            hb[mode] = malloc(n * e), yb[mode] = malloc(n * e), ob[mode] = malloc(n * e);
            CHECK(cudaMemcpyAsync(dh, ra, n * e, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
            CHECK(cudaMemsetAsync(dy, 0xff, n * e, p->st) == cudaSuccess); /* NaN: every element must be written */
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
            CHECK(p->go->add_rmsnorm(p->g, dh, dy, gn, M, D, 1e-6f, dout) == PL_OK);
            down(p, hb[mode], dh, n * e);
            down(p, yb[mode], dy, n * e);
            down(p, ob[mode], dout, n * e);
            const long got = pl_cuda_backend_parts_fused(p->g) - fused0;
            CHECK_MSG(got == (mode ? 0 : want), "[%d x %d] x [%d x %d]^T, mode %d: %ld partial sums in the norm, want %ld", M,
                      K, D, K, mode, got, mode ? 0 : want);
        }
        pl_cuda_backend_parts_norm(p->g, 0);
        snprintf(what, sizeof what, "matmul + add_rmsnorm [%d x %d] x [%d x %d]^T", M, K, D, K);
        CHECK_MSG(memcmp(yb[0], yb[1], n * e) == 0, "%s: GEMM output differs with the partials in the norm", what);
        CHECK_MSG(memcmp(hb[0], hb[1], n * e) == 0, "%s: h differs with the partials in the norm", what);
        CHECK_MSG(memcmp(ob[0], ob[1], n * e) == 0, "%s: norm differs with the partials in the norm", what);
        /* against the CPU: y, then h += y and the norm from the GPU's y (one bf16 rounding apart) */
        void *cy = malloc(n * e), *co = malloc(n * e);
        float *gf = malloc(sizeof(float) * n), *cf = malloc(sizeof(float) * n);
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cy, 0, err, sizeof err), err);
        from_act(p->dt, yb[0], n, gf);
        from_act(p->dt, cy, n, cf);
        cmp(what, gf, cf, n, 1e-2, 1e-3);
        CHECK(p->co->add(&p->cpu, ra, yb[0], n) == PL_OK);
        CHECK_MSG(memcmp(ra, hb[0], n * e) == 0, "%s: h differs from the CPU add of the GPU's GEMM output", what);
        CHECK(p->co->rmsnorm(&p->cpu, ra, cn, M, D, 1e-6f, co) == PL_OK);
        from_act(p->dt, ob[0], n, gf);
        from_act(p->dt, co, n, cf);
        cmp(what, gf, cf, n, act_tol(p->dt), 1e-3);
        /* a held GEMM whose next op is not its norm launches as before */
        CHECK(cudaMemsetAsync(dy, 0xff, n * e, p->st) == cudaSuccess);
        const long fused1 = pl_cuda_backend_parts_fused(p->g);
        CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
        CHECK(p->go->add(p->g, dh, dy, n) == PL_OK);
        CHECK(pl_cuda_backend_parts_fused(p->g) == fused1);
        down(p, cy, dy, n * e);
        CHECK_MSG(memcmp(cy, yb[1], n * e) == 0, "%s: GEMM output differs when another op follows", what);
        for (int mode = 0; mode < 2; mode++) free(hb[mode]), free(yb[mode]), free(ob[mode]);
        p->go->free(p->g, dx), p->go->free(p->g, dh), p->go->free(p->g, dy), p->go->free(p->g, dout);
        p->co->weight_free(&p->cpu, cw), p->go->weight_free(p->g, gw);
        p->co->weight_free(&p->cpu, cn), p->go->weight_free(p->g, gn);
        free(w), free(x), free(nw), free(r), free(xa), free(ra), free(cy), free(co), free(gf), free(cf);
    }
    pl_cuda_backend_tune_tile(p->g, 0, 0, 0);
    pl_cuda_backend_kslice(p->g, 0);
}

/* A decode batch's MLP (gate/up GEMM, SwiGLU, down GEMM, then the residual add + RMSNorm) with
 * the fused kernel (pl_cuda_backend_fused_mlp: AUTO, or forced from 1 row) against the three
 * kernels (never): the SwiGLU output must be the same bits, the down output, h and the norm
 * within a bf16 rounding of the down sums' order, and near the CPU's; the kernel must have run
 * where it has a plan on this device. With an add instead of the norm after it, its partials are
 * added by their own kernel into the same bits. A shape with no plan runs the three kernels. */
/* fused MLP modes of test_mlp_fused: pl_cuda_backend_fused_mlp's, and 3: forced in a plain
 * launch (pl_cuda_backend_mlp_plain) */
static void mlp_mode(pair *p, int mode) {
    pl_cuda_backend_fused_mlp(p->g, mode == 3 ? 2 : mode);
    pl_cuda_backend_mlp_plain(p->g, mode == 3);
    pl_cuda_backend_wide_proj(p->g, mode == 1 ? 1 : 0); /* the three kernels: the down GEMM as the tile GEMM too */
}

static void test_mlp_fused(pair *p) {
    /* {hidden, inter, rows, mode}: Qwen3-4B, -0.6B, -1.7B and -8B widths (the four compiled forms;
     * a plain launch, mode 3), rows 1-64 (forced below the AUTO rows), and a hidden size with no
     * plan */
    static const int shapes[][4] = {{2560, 9728, 64, 0}, {2560, 9728, 40, 2}, {2560, 9728, 3, 2}, {1024, 3072, 60, 0},
                                    {2048, 6144, 33, 2}, {4096, 12288, 17, 2}, {1000, 3000, 64, 2}, {2560, 9728, 57, 3}};
    const size_t ns = sizeof shapes / sizeof shapes[0];
    const int avail = pl_cuda_mlp_available();
    char what[160];
    for (size_t si = 0; si < ns; si++) {
        const int H = shapes[si][0], I = shapes[si][1], M = shapes[si][2], fmode = shapes[si][3];
        pl_cuda_mlp_plan plan;
        const long want = avail && pl_cuda_mlp_plan_for(H, I, dev_sms(), &plan) ? 1 : 0;
        const size_t e = 2, nx = (size_t)M * H, nh = (size_t)M * I;
        float *wgu = rand_act(PL_F32, (size_t)2 * I * H, 0.05f), *wd = rand_act(PL_F32, (size_t)H * I, 0.05f);
        float *x = rand_act(p->dt, nx, 1.0f), *nw = rand_act(PL_F32, (size_t)H, 1.0f), *r = rand_act(p->dt, nx, 4.0f);
        void *cgu = make_weight(p, 0, wgu, 2 * I, H, 2, 1), *ggu = make_weight(p, 1, wgu, 2 * I, H, 2, 1);
        void *cd = make_weight(p, 0, wd, H, I, 1, 1), *gd = make_weight(p, 1, wd, H, I, 1, 1);
        void *cn = make_weight(p, 0, nw, 1, H, 1, 0), *gn = make_weight(p, 1, nw, 1, H, 1, 0);
        void *xa = to_act(p->dt, x, nx), *ra = to_act(p->dt, r, nx);
        void *dx = dup_dev(p, xa, nx * e), *dgu = p->go->alloc(p->g, 2 * nh * e), *dm = p->go->alloc(p->g, nh * e);
        void *dy = p->go->alloc(p->g, nx * e), *dh = p->go->alloc(p->g, nx * e), *dout = p->go->alloc(p->g, nx * e);
        unsigned char *mb[2], *yb[2], *hb[2], *ob[2];
        for (int v = 0; v < 2; v++) { /* 0: fused (where it runs), 1: three kernels */
            mlp_mode(p, v ? 1 : fmode);
            const long runs0 = pl_cuda_backend_mlp_runs(p->g);
            mb[v] = malloc(nh * e), yb[v] = malloc(nx * e), hb[v] = malloc(nx * e), ob[v] = malloc(nx * e);
            CHECK(cudaMemcpyAsync(dh, ra, nx * e, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
            CHECK(cudaMemsetAsync(dm, 0xff, nh * e, p->st) == cudaSuccess); /* NaN: every element must be written */
            CHECK(cudaMemsetAsync(dy, 0xff, nx * e, p->st) == cudaSuccess);
            CHECK_OK(p->go->matmul(p->g, dx, M, ggu, dgu, 0, err, sizeof err), err);
            CHECK(p->go->swiglu(p->g, dgu, M, I, dm) == PL_OK);
            CHECK_OK(p->go->matmul(p->g, dm, M, gd, dy, 0, err, sizeof err), err);
            CHECK(p->go->add_rmsnorm(p->g, dh, dy, gn, M, H, 1e-6f, dout) == PL_OK);
            down(p, mb[v], dm, nh * e);
            down(p, yb[v], dy, nx * e);
            down(p, hb[v], dh, nx * e);
            down(p, ob[v], dout, nx * e);
            const long got = pl_cuda_backend_mlp_runs(p->g) - runs0;
            CHECK_MSG(got == (v ? 0 : want), "mlp [%d x %d], inter %d, variant %d: %ld fused launches, want %ld", M, H, I, v, got,
                      v ? 0 : want);
        }
        snprintf(what, sizeof what, "mlp [%d x %d], inter %d, mode %d, fused", M, H, I, fmode);
        /* the SwiGLU output: the same bits wherever the tile GEMM sums gate/up over all of K in one
         * CTA (Qwen3-4B, -1.7B, -8B); one bf16 rounding apart where it splits K (-0.6B at 48 rows) */
        size_t same = 0;
        for (size_t i = 0; i < nh; i++) same += ((const uint16_t *)mb[0])[i] == ((const uint16_t *)mb[1])[i];
        CHECK_MSG(same >= nh - nh / 100, "%s: SwiGLU output: %zu of %zu values the three kernels' bits", what, same, nh);
        float *gf = malloc(sizeof(float) * nx), *cf = malloc(sizeof(float) * nx);
        float *gm = malloc(sizeof(float) * nh), *cmf = malloc(sizeof(float) * nh);
        from_act(p->dt, mb[0], nh, gm);
        from_act(p->dt, mb[1], nh, cmf);
        cmp(what, gm, cmf, nh, 1e-2, 1e-3);
        free(gm), free(cmf);
        from_act(p->dt, yb[0], nx, gf);
        from_act(p->dt, yb[1], nx, cf);
        cmp(what, gf, cf, nx, 1e-2, 1e-3);
        /* the norm's h and output from the fused y: as the CPU makes them from it */
        CHECK(p->co->add(&p->cpu, ra, yb[0], nx) == PL_OK);
        CHECK_MSG(memcmp(ra, hb[0], nx * e) == 0, "%s: h differs from the CPU add of its down output", what);
        void *co = malloc(nx * e), *cm = malloc(nh * e), *cgo = malloc(2 * nh * e), *cy = malloc(nx * e);
        CHECK(p->co->rmsnorm(&p->cpu, ra, cn, M, H, 1e-6f, co) == PL_OK);
        from_act(p->dt, ob[0], nx, gf);
        from_act(p->dt, co, nx, cf);
        cmp(what, gf, cf, nx, act_tol(p->dt), 1e-3);
        /* against the CPU's three ops */
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cgu, cgo, 0, err, sizeof err), err);
        CHECK(p->co->swiglu(&p->cpu, cgo, M, I, cm) == PL_OK);
        CHECK_OK(p->co->matmul(&p->cpu, cm, M, cd, cy, 0, err, sizeof err), err);
        from_act(p->dt, yb[0], nx, gf);
        from_act(p->dt, cy, nx, cf);
        snprintf(what, sizeof what, "mlp [%d x %d], inter %d, fused against the CPU", M, H, I);
        cmp(what, gf, cf, nx, 2e-2, 1e-3);
        /* an add after it instead of the norm: the partials added by their own kernel, the same y;
         * the weight stages before the PDL wait (the default, one, the whole ring) change when
         * bytes move, not the result */
        mlp_mode(p, fmode);
        static const int pres[] = {0, 1, 12};
        for (int i = 0; i < 3; i++) {
            pl_cuda_backend_mlp_pre(p->g, pres[i]);
            CHECK(cudaMemsetAsync(dy, 0xff, nx * e, p->st) == cudaSuccess);
            CHECK_OK(p->go->matmul(p->g, dx, M, ggu, dgu, 0, err, sizeof err), err);
            CHECK(p->go->swiglu(p->g, dgu, M, I, dm) == PL_OK);
            CHECK_OK(p->go->matmul(p->g, dm, M, gd, dy, 0, err, sizeof err), err);
            CHECK(p->go->add(p->g, dh, dy, nx) == PL_OK);
            down(p, cy, dy, nx * e);
            CHECK_MSG(memcmp(cy, yb[0], nx * e) == 0, "%s: down output differs with an add after it (%d weight stages before the wait, 0: the default)",
                      what, pres[i]);
        }
        pl_cuda_backend_mlp_pre(p->g, 0);
        /* held gate/up followed by another op: the GEMM launches as it was */
        CHECK(cudaMemsetAsync(dgu, 0xff, 2 * nh * e, p->st) == cudaSuccess);
        CHECK_OK(p->go->matmul(p->g, dx, M, ggu, dgu, 0, err, sizeof err), err);
        CHECK(p->go->add(p->g, dh, dy, nx) == PL_OK);
        CHECK(p->go->swiglu(p->g, dgu, M, I, dm) == PL_OK);
        down(p, cm, dm, nh * e);
        CHECK_MSG(memcmp(cm, mb[1], nh * e) == 0, "%s: gate/up + SwiGLU differ when another op follows the GEMM", what);
        mlp_mode(p, 0);
        for (int v = 0; v < 2; v++) free(mb[v]), free(yb[v]), free(hb[v]), free(ob[v]);
        p->go->free(p->g, dx), p->go->free(p->g, dgu), p->go->free(p->g, dm), p->go->free(p->g, dy), p->go->free(p->g, dh);
        p->go->free(p->g, dout);
        p->co->weight_free(&p->cpu, cgu), p->go->weight_free(p->g, ggu), p->co->weight_free(&p->cpu, cd), p->go->weight_free(p->g, gd);
        p->co->weight_free(&p->cpu, cn), p->go->weight_free(p->g, gn);
        free(wgu), free(wd), free(x), free(nw), free(r), free(xa), free(ra), free(gf), free(cf), free(co), free(cm), free(cgo), free(cy);
    }
}

/* A projection whose add + RMSNorm follows, as the wide kernel (pl_cuda_backend_wide_proj) and as
 * the tile GEMM: {n, k, rows, mode}: the o projections of Qwen3-4B, -0.6B, -8B, -1.7B (forced
 * below the AUTO rows), an odd n, AUTO at its first row */
static void test_wide_proj(pair *p) {
    static const int shapes[][4] = {{2560, 4096, 64, 0}, {1024, 2048, 60, 0}, {4096, 4096, 33, 2},
                                    {2048, 2048, 17, 2}, {1000, 3072, 64, 2}, {2560, 4096, 57, 0}, {6144, 2560, 64, 0}};
    const size_t ns = sizeof shapes / sizeof shapes[0];
    const int avail = pl_cuda_mlp_available();
    char what[160];
    for (size_t si = 0; si < ns; si++) {
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2], mode = shapes[si][3];
        pl_cuda_mlp_plan plan;
        const long want = avail && pl_cuda_wide_plan_for(N, K, dev_sms(), &plan) ? 1 : 0;
        const size_t e = 2, nx = (size_t)M * K, ny = (size_t)M * N;
        float *w = rand_act(PL_F32, (size_t)N * K, 0.05f), *x = rand_act(p->dt, nx, 1.0f), *nw = rand_act(PL_F32, (size_t)N, 1.0f);
        float *r = rand_act(p->dt, ny, 4.0f);
        void *cw = make_weight(p, 0, w, N, K, 1, 1), *gw = make_weight(p, 1, w, N, K, 1, 1);
        void *cn = make_weight(p, 0, nw, 1, N, 1, 0), *gn = make_weight(p, 1, nw, 1, N, 1, 0);
        void *xa = to_act(p->dt, x, nx), *ra = to_act(p->dt, r, ny);
        void *dx = dup_dev(p, xa, nx * e), *dy = p->go->alloc(p->g, ny * e), *dh = p->go->alloc(p->g, ny * e);
        void *dout = p->go->alloc(p->g, ny * e);
        unsigned char *yb[2], *hb[2], *ob[2];
        for (int v = 0; v < 2; v++) { /* 0: wide (where it runs), 1: the tile GEMM */
            pl_cuda_backend_wide_proj(p->g, v ? 1 : mode);
            const long runs0 = pl_cuda_backend_wide_runs(p->g);
            yb[v] = malloc(ny * e), hb[v] = malloc(ny * e), ob[v] = malloc(ny * e);
            CHECK(cudaMemcpyAsync(dh, ra, ny * e, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
            CHECK(cudaMemsetAsync(dy, 0xff, ny * e, p->st) == cudaSuccess); /* NaN: every element must be written */
            CHECK(cudaMemsetAsync(dout, 0xff, ny * e, p->st) == cudaSuccess);
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
            CHECK(p->go->add_rmsnorm(p->g, dh, dy, gn, M, N, 1e-6f, dout) == PL_OK);
            down(p, yb[v], dy, ny * e);
            down(p, hb[v], dh, ny * e);
            down(p, ob[v], dout, ny * e);
            const long got = pl_cuda_backend_wide_runs(p->g) - runs0;
            CHECK_MSG(got == (v ? 0 : want), "wide [%d x %d] x [%d x %d]^T, variant %d: %ld wide launches, want %ld", M, K, N, K, v, got,
                      v ? 0 : want);
        }
        snprintf(what, sizeof what, "wide [%d x %d] x [%d x %d]^T, mode %d", M, K, N, K, mode);
        float *gf = malloc(sizeof(float) * ny), *cf = malloc(sizeof(float) * ny);
        from_act(p->dt, yb[0], ny, gf);
        from_act(p->dt, yb[1], ny, cf);
        cmp(what, gf, cf, ny, 1e-2, 1e-3);
        /* the norm's h and output from the wide y: as the CPU makes them from it */
        void *co = malloc(ny * e), *cy = malloc(ny * e);
        CHECK(p->co->add(&p->cpu, ra, yb[0], ny) == PL_OK);
        CHECK_MSG(memcmp(ra, hb[0], ny * e) == 0, "%s: h differs from the CPU add of its output", what);
        CHECK(p->co->rmsnorm(&p->cpu, ra, cn, M, N, 1e-6f, co) == PL_OK);
        from_act(p->dt, ob[0], ny, gf);
        from_act(p->dt, co, ny, cf);
        cmp(what, gf, cf, ny, act_tol(p->dt), 1e-3);
        /* against the CPU's matmul */
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cy, 0, err, sizeof err), err);
        from_act(p->dt, yb[0], ny, gf);
        from_act(p->dt, cy, ny, cf);
        snprintf(what, sizeof what, "wide [%d x %d] x [%d x %d]^T against the CPU", M, K, N, K);
        cmp(what, gf, cf, ny, 2e-2, 1e-3);
        /* held, then another op: the tile GEMM as it was */
        pl_cuda_backend_wide_proj(p->g, mode);
        const long runs0 = pl_cuda_backend_wide_runs(p->g);
        CHECK(cudaMemsetAsync(dy, 0xff, ny * e, p->st) == cudaSuccess);
        CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
        CHECK(p->go->add(p->g, dh, dy, ny) == PL_OK);
        down(p, cy, dy, ny * e);
        CHECK_MSG(memcmp(cy, yb[1], ny * e) == 0, "%s: output differs when another op follows the GEMM", what);
        CHECK_MSG(pl_cuda_backend_wide_runs(p->g) == runs0, "%s: a wide launch with no norm after it", what);
        /* the partials' norm with other CTA counts per row (one where the row's warps fit one
         * CTA, four where they divide; else its AUTO count): the same bits */
        void *r0 = to_act(p->dt, r, ny);
        static const int forced[] = {1, 4};
        for (int fi = 0; fi < 2; fi++) {
            pl_cuda_backend_parts_ctas(p->g, forced[fi]);
            CHECK(cudaMemcpyAsync(dh, r0, ny * e, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
            CHECK(cudaMemsetAsync(dout, 0xff, ny * e, p->st) == cudaSuccess);
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
            CHECK(p->go->add_rmsnorm(p->g, dh, dy, gn, M, N, 1e-6f, dout) == PL_OK);
            down(p, cy, dh, ny * e);
            down(p, co, dout, ny * e);
            CHECK_MSG(memcmp(cy, hb[0], ny * e) == 0 && memcmp(co, ob[0], ny * e) == 0, "%s: h or the norm differ at %d CTAs per row asked",
                      what, forced[fi]);
        }
        pl_cuda_backend_parts_ctas(p->g, 0);
        free(r0);
        pl_cuda_backend_wide_proj(p->g, 0);
        for (int v = 0; v < 2; v++) free(yb[v]), free(hb[v]), free(ob[v]);
        p->go->free(p->g, dx), p->go->free(p->g, dy), p->go->free(p->g, dh), p->go->free(p->g, dout);
        p->co->weight_free(&p->cpu, cw), p->go->weight_free(p->g, gw), p->co->weight_free(&p->cpu, cn), p->go->weight_free(p->g, gn);
        free(w), free(x), free(nw), free(r), free(xa), free(ra), free(gf), free(cf), free(co), free(cy);
    }
}

/* A projection no norm takes, as the full-K kernel (pl_cuda_backend_fullk_proj) and as the tile
 * GEMM: {n, k, rows, mode, ring}: the qkv projections of Qwen3-4B, -0.6B, -8B (mode 1's rows), -1.7B
 * forced below them, a partial last tile with the deep ring, 5 rows, 64-column tiles in both rings,
 * and a shape no form takes (n / SMs columns past the widest tile). Each also with another
 * ring (the same bits: the same sums in the same order). x carries NaN rows past `rows` that its allocation holds (they
 * may reach only rows never stored), y a NaN row past them that must stay. */
static void test_fullk_proj(pair *p) {
    static const int shapes[][5] = {{6144, 2560, 64, 1, 0}, {4096, 1024, 60, 1, 0}, {6144, 4096, 57, 1, 0}, {4096, 2048, 33, 2, 0},
                                    {1000, 3072, 64, 2, 1}, {2050, 2560, 5, 2, 1},  {8192, 1024, 61, 1, 0}, {8000, 1536, 64, 2, 1},
                                    {20000, 512, 64, 2, 0}};
    const size_t ns = sizeof shapes / sizeof shapes[0];
    const int avail = pl_cuda_mlp_available();
    char what[160];
    for (size_t si = 0; si < ns; si++) {
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2], mode = shapes[si][3], ring = shapes[si][4];
        const int other = ring == 0 ? 1 : 0; /* the ring of variant 2 */
        pl_cuda_mlp_plan plan;
        const long want = avail && pl_cuda_fullk_plan_for(N, K, dev_sms(), ring, &plan) ? 1 : 0;
        const long want2 = avail && pl_cuda_fullk_plan_for(N, K, dev_sms(), other, &plan) ? 1 : 0;
        const size_t e = 2, nx = (size_t)M * K, ny = (size_t)M * N, xpad = 3 * (size_t)K * e;
        float *w = rand_act(PL_F32, (size_t)N * K, 0.05f), *x = rand_act(p->dt, nx, 1.0f);
        void *cw = make_weight(p, 0, w, N, K, 1, 1), *gw = make_weight(p, 1, w, N, K, 1, 1);
        void *xa = to_act(p->dt, x, nx);
        void *dx = dup_dev_padded(p, xa, nx * e, xpad), *dy = p->go->alloc(p->g, (ny + N) * e);
        unsigned char *yb[3];
        for (int v = 0; v < 3; v++) { /* 0: the mode, 1: the tile GEMM (the default), 2: another ring (forced) */
            /* the other ring also with one stage before its wait */
            pl_cuda_backend_fullk_proj(p->g, v == 0 ? mode : v == 1 ? 0 : 2, v == 2 ? other : ring, v == 2 ? 1 : 0);
            const long runs0 = pl_cuda_backend_fullk_runs(p->g);
            yb[v] = malloc((ny + N) * e);
            CHECK(cudaMemsetAsync(dy, 0xff, (ny + N) * e, p->st) == cudaSuccess); /* NaN: every element must be written */
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
            down(p, yb[v], dy, (ny + N) * e);
            const long got = pl_cuda_backend_fullk_runs(p->g) - runs0;
            const long w_v = v == 0 ? want : v == 1 ? 0 : want2;
            CHECK_MSG(got == w_v, "full-K [%d x %d] x [%d x %d]^T, variant %d: %ld launches, want %ld", M, K, N, K, v, got, w_v);
            int kept = 1;
            for (size_t i = ny * e; i < (ny + N) * e; i++) kept &= yb[v][i] == 0xff;
            CHECK_MSG(kept, "full-K [%d x %d] x [%d x %d]^T, variant %d: a row past %d written", M, K, N, K, v, M);
        }
        snprintf(what, sizeof what, "full-K [%d x %d] x [%d x %d]^T, mode %d, ring %d", M, K, N, K, mode, ring);
        if (want && want2) CHECK_MSG(memcmp(yb[0], yb[2], ny * e) == 0, "%s: the two rings' outputs differ", what);
        float *gf = malloc(sizeof(float) * ny), *cf = malloc(sizeof(float) * ny);
        from_act(p->dt, yb[0], ny, gf);
        from_act(p->dt, yb[1], ny, cf);
        cmp(what, gf, cf, ny, 1e-2, 1e-3);
        void *cy = malloc(ny * e);
        CHECK_OK(p->co->matmul(&p->cpu, xa, M, cw, cy, 0, err, sizeof err), err);
        from_act(p->dt, cy, ny, cf);
        snprintf(what, sizeof what, "full-K [%d x %d] x [%d x %d]^T against the CPU", M, K, N, K);
        cmp(what, gf, cf, ny, 2e-2, 1e-3);
        /* held (where a wide plan holds it) and flushed by another op: the same bits */
        pl_cuda_backend_fullk_proj(p->g, mode, ring, 0);
        CHECK(cudaMemsetAsync(dy, 0xff, ny * e, p->st) == cudaSuccess);
        CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
        CHECK(p->go->add(p->g, dy, dy, 0) == PL_OK);
        down(p, cy, dy, ny * e);
        CHECK_MSG(memcmp(cy, yb[0], ny * e) == 0, "%s: output differs when another op follows the GEMM", what);
        pl_cuda_backend_fullk_proj(p->g, 0, 0, 0);
        for (int v = 0; v < 3; v++) free(yb[v]);
        p->go->free(p->g, dx), p->go->free(p->g, dy);
        p->co->weight_free(&p->cpu, cw), p->go->weight_free(p->g, gw);
        free(w), free(x), free(xa), free(gf), free(cf), free(cy);
    }
}

/* A bf16 GEMM of each shape {n, k, rows} under a hook's two settings a and b (then AUTO again)
 * gives the same bits, every element written (NaN before); what names the hook. */
static void same_bits_under(pair *p, const int (*shapes)[3], size_t ns, void (*hook)(pl_cuda_backend *, int), int a, int b,
                            const char *what) {
    for (size_t si = 0; si < ns; si++) {
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2];
        const size_t e = 2, nx = (size_t)M * K, ny = (size_t)M * N;
        float *w = rand_act(PL_F32, (size_t)N * K, 0.05f), *x = rand_act(p->dt, nx, 1.0f);
        void *gw = make_weight(p, 1, w, N, K, 1, 1), *xa = to_act(p->dt, x, nx);
        void *dx = dup_dev(p, xa, nx * e), *dy = p->go->alloc(p->g, ny * e);
        unsigned char *yb[2];
        for (int v = 0; v < 2; v++) {
            hook(p->g, v ? b : a);
            yb[v] = malloc(ny * e);
            CHECK(cudaMemsetAsync(dy, 0xff, ny * e, p->st) == cudaSuccess);
            CHECK_OK(p->go->matmul(p->g, dx, M, gw, dy, 0, err, sizeof err), err);
            CHECK(p->go->add(p->g, dy, dy, 0) == PL_OK); /* a held GEMM launches here */
            down(p, yb[v], dy, ny * e);
        }
        hook(p->g, 0);
        CHECK_MSG(memcmp(yb[0], yb[1], ny * e) == 0, "%s [%d x %d] x [%d x %d]^T: %d and %d give different bits", what, M, K, N, K, a, b);
        free(yb[0]), free(yb[1]);
        p->go->free(p->g, dx), p->go->free(p->g, dy), p->go->weight_free(p->g, gw);
        free(w), free(x), free(xa);
    }
}

/* The tile GEMM with its one-wave launches kept one CTA per SM (pl_cuda_backend_tile_alone) gives
 * the default's bits: Qwen3-4B's qkv at 64 rows, its o at 40 (one wave of K splits), and a launch
 * of more than one wave (the same CTAs as the default). */
static void test_tile_alone(pair *p) {
    static const int shapes[][3] = {{6144, 2560, 64}, {2560, 4096, 40}, {20000, 512, 64}};
    same_bits_under(p, shapes, sizeof shapes / sizeof shapes[0], pl_cuda_backend_tile_alone, 0, 16, "tile alone");
}

/* All of the ring's weight stages before the PDL wait or all but one (pl_cuda_backend_tile_pre_all
 * 15 and 16): the same bits for the k-sliced tiles (o- and down-shaped) and the tile kernel (with
 * and without K splits, tails in N and K). */
static void test_tile_pre_all(pair *p) {
    pl_cuda_backend_kslice(p->g, 2); /* k-sliced tiles from 2 rows */
    static const int shapes[][3] = {{2560, 4096, 4}, {2560, 9728, 4}, {6144, 2560, 4}, {19456, 512, 3}, {1000, 3000, 5}, {328, 2056, 7}};
    same_bits_under(p, shapes, sizeof shapes / sizeof shapes[0], pl_cuda_backend_tile_pre_all, 16, 15, "pre-all");
    pl_cuda_backend_kslice(p->g, 0);
}

static void test_elementwise(pair *p) {
    pl_dtype dt = p->dt;
    size_t e = esz(dt);
    char what[96];
    /* embed */
    {
        int V = 37, C = 66, n = 9;
        float *w = rand_act(PL_F32, (size_t)V * C, 1.0f);
        void *cw = make_weight(p, 0, w, V, C, 1, 1), *gw = make_weight(p, 1, w, V, C, 1, 1);
        int32_t tok[9];
        for (int i = 0; i < n; i++) tok[i] = (int32_t)(rnd() % V);
        tok[0] = V - 1;
        void *co = malloc((size_t)n * C * e), *go = malloc((size_t)n * C * e), *d = p->go->alloc(p->g, (size_t)n * C * e);
        CHECK_OK(p->co->embed(&p->cpu, cw, tok, n, co, err, sizeof err), err);
        CHECK_OK(p->go->embed(p->g, gw, tok, n, d, err, sizeof err), err);
        down(p, go, d, (size_t)n * C * e);
        CHECK_MSG(memcmp(co, go, (size_t)n * C * e) == 0, "embed differs");
        tok[3] = V;
        CHECK_ERR(p->go->embed(p->g, gw, tok, n, d, err, sizeof err), PL_ERR_INVALID, "tokens[3]", err);
        p->go->free(p->g, d);
        p->co->weight_free(&p->cpu, cw);
        p->go->weight_free(p->g, gw);
        free(w), free(co), free(go);
    }
    /* rmsnorm, odd and model widths */
    int dims[] = {64, 333, 2560};
    for (int k = 0; k < 3; k++) {
        int R = 5, D = dims[k];
        float *x = rand_act(dt, (size_t)R * D, 3.0f), *w = rand_act(PL_F32, (size_t)D, 1.0f);
        void *cw = make_weight(p, 0, w, 1, D, 1, 0), *gw = make_weight(p, 1, w, 1, D, 1, 0);
        void *xa = to_act(dt, x, (size_t)R * D), *dx = dup_dev(p, xa, (size_t)R * D * e);
        void *co = malloc((size_t)R * D * e), *go = malloc((size_t)R * D * e), *d = p->go->alloc(p->g, (size_t)R * D * e);
        CHECK(p->co->rmsnorm(&p->cpu, xa, cw, R, D, 1e-6f, co) == PL_OK);
        CHECK(p->go->rmsnorm(p->g, dx, gw, R, D, 1e-6f, d) == PL_OK);
        down(p, go, d, (size_t)R * D * e);
        float *cf = malloc(sizeof(float) * R * D), *gf = malloc(sizeof(float) * R * D);
        from_act(dt, co, (size_t)R * D, cf);
        from_act(dt, go, (size_t)R * D, gf);
        snprintf(what, sizeof what, "rmsnorm dim %d", D);
        cmp(what, gf, cf, (size_t)R * D, act_tol(dt), 1e-3);
        /* the fused residual add + rmsnorm against the CPU's add, then rmsnorm: h bit-equal */
        float *r = rand_act(dt, (size_t)R * D, 2.0f);
        void *ra = to_act(dt, r, (size_t)R * D), *dr = dup_dev(p, ra, (size_t)R * D * e);
        void *gh = malloc((size_t)R * D * e);
        CHECK(p->co->add(&p->cpu, xa, ra, (size_t)R * D) == PL_OK);
        CHECK(p->co->rmsnorm(&p->cpu, xa, cw, R, D, 1e-6f, co) == PL_OK);
        CHECK(p->go->add_rmsnorm(p->g, dx, dr, gw, R, D, 1e-6f, d) == PL_OK);
        down(p, gh, dx, (size_t)R * D * e);
        CHECK_MSG(memcmp(gh, xa, (size_t)R * D * e) == 0, "add_rmsnorm dim %d: h differs from add", D);
        down(p, go, d, (size_t)R * D * e);
        from_act(dt, co, (size_t)R * D, cf);
        from_act(dt, go, (size_t)R * D, gf);
        snprintf(what, sizeof what, "add_rmsnorm dim %d", D);
        cmp(what, gf, cf, (size_t)R * D, act_tol(dt), 1e-3);
        p->go->free(p->g, dr);
        free(r), free(ra), free(gh);
        p->go->free(p->g, d), p->go->free(p->g, dx);
        p->co->weight_free(&p->cpu, cw), p->go->weight_free(p->g, gw);
        free(x), free(w), free(xa), free(co), free(go), free(cf), free(gf);
    }
    /* rope table, then q/k norm + RoPE on the same table */
    int hds[] = {64, 128, 96, 256}; /* 64, 128, 256: the head in registers; 96: through shared memory */
    for (int k = 0; k < 4; k++) {
        int R = 7, hd = hds[k], nq = 4, nkv = 2;
        int32_t pos[7] = {0, 1, 17, 1000, 40000, 131071, 5};
        float *ccs = malloc(sizeof(float) * R * hd), *gcs = malloc(sizeof(float) * R * hd);
        float *dcs = p->go->alloc(p->g, sizeof(float) * R * hd);
        CHECK(p->co->rope_table(&p->cpu, pos, R, hd, 1e6, ccs) == PL_OK);
        CHECK(p->go->rope_table(p->g, pos, R, hd, 1e6, dcs) == PL_OK);
        down(p, gcs, dcs, sizeof(float) * R * hd);
        snprintf(what, sizeof what, "rope_table hd %d", hd);
        cmp(what, gcs, ccs, (size_t)R * hd, 4e-6, 1.0);
        size_t stride = (size_t)(nq + 2 * nkv) * hd + 6; /* padded rows */
        float *x = rand_act(dt, (size_t)R * stride, 2.0f), *wq = rand_act(PL_F32, hd, 1.0f), *wk = rand_act(PL_F32, hd, 1.0f);
        void *cq = make_weight(p, 0, wq, 1, hd, 1, 0), *ck = make_weight(p, 0, wk, 1, hd, 1, 0);
        void *gq = make_weight(p, 1, wq, 1, hd, 1, 0), *gk = make_weight(p, 1, wk, 1, hd, 1, 0);
        void *xa = to_act(dt, x, (size_t)R * stride), *dx = dup_dev(p, xa, (size_t)R * stride * e);
        CHECK(cudaMemcpyAsync(dcs, ccs, sizeof(float) * R * hd, cudaMemcpyHostToDevice, p->st) == cudaSuccess); /* same table */
        /* the GPU also writes the q heads to a separate buffer (q_out), from a second copy */
        float *xo = malloc(sizeof(float) * R * stride); /* the rows before the op */
        from_act(dt, xa, (size_t)R * stride, xo);
        void *dx2 = dup_dev(p, xa, (size_t)R * stride * e), *dq = p->go->alloc(p->g, (size_t)R * nq * hd * e);
        CHECK(p->go->qk_norm_rope(p->g, dx2, R, stride, nq, nkv, hd, gq, gk, 1e-6f, dcs, dq) == PL_OK);
        CHECK(p->co->qk_norm_rope(&p->cpu, xa, R, stride, nq, nkv, hd, cq, ck, 1e-6f, ccs, NULL) == PL_OK);
        CHECK(p->go->qk_norm_rope(p->g, dx, R, stride, nq, nkv, hd, gq, gk, 1e-6f, dcs, NULL) == PL_OK);
        {
            void *gq_out = malloc((size_t)R * nq * hd * e), *g2 = malloc((size_t)R * stride * e);
            float *qf = malloc(sizeof(float) * R * nq * hd), *cqf = malloc(sizeof(float) * R * nq * hd);
            float *cf2 = malloc(sizeof(float) * R * stride), *gf2 = malloc(sizeof(float) * R * stride);
            down(p, gq_out, dq, (size_t)R * nq * hd * e);
            down(p, g2, dx2, (size_t)R * stride * e);
            from_act(dt, gq_out, (size_t)R * nq * hd, qf);
            from_act(dt, xa, (size_t)R * stride, cf2);
            from_act(dt, g2, (size_t)R * stride, gf2);
            for (int r = 0; r < R; r++) memcpy(cqf + (size_t)r * nq * hd, cf2 + r * stride, sizeof(float) * nq * hd);
            snprintf(what, sizeof what, "qk_norm_rope q_out hd %d", hd);
            cmp(what, qf, cqf, (size_t)R * nq * hd, act_tol(dt), 1e-3);
            /* with q_out the q heads in qkv stay as they were; the k heads change in place */
            int qsame = 1;
            for (int r = 0; r < R; r++)
                for (size_t i = 0; i < (size_t)nq * hd; i++) qsame &= gf2[r * stride + i] == xo[r * stride + i];
            CHECK_MSG(qsame, "qk_norm_rope hd %d with q_out changed the q heads in place", hd);
            for (int r = 0; r < R; r++) memcpy(gf2 + r * stride, cf2 + r * stride, sizeof(float) * nq * hd);
            snprintf(what, sizeof what, "qk_norm_rope k with q_out hd %d", hd);
            cmp(what, gf2, cf2, (size_t)R * stride, act_tol(dt), 1e-3);
            free(gq_out), free(g2), free(qf), free(cqf), free(cf2), free(gf2);
            p->go->free(p->g, dx2), p->go->free(p->g, dq);
        }
        free(xo);
        void *go = malloc((size_t)R * stride * e);
        down(p, go, dx, (size_t)R * stride * e);
        float *cf = malloc(sizeof(float) * R * stride), *gf = malloc(sizeof(float) * R * stride);
        from_act(dt, xa, (size_t)R * stride, cf);
        from_act(dt, go, (size_t)R * stride, gf);
        snprintf(what, sizeof what, "qk_norm_rope hd %d", hd);
        cmp(what, gf, cf, (size_t)R * stride, act_tol(dt), 1e-3);
        /* v heads and the padding are untouched */
        int same = 1;
        for (int r = 0; r < R; r++)
            for (size_t i = (size_t)(nq + nkv) * hd; i < stride; i++) same &= gf[r * stride + i] == cf[r * stride + i];
        CHECK_MSG(same, "qk_norm_rope hd %d wrote outside q/k heads", hd);
        p->go->free(p->g, dcs), p->go->free(p->g, dx);
        p->co->weight_free(&p->cpu, cq), p->co->weight_free(&p->cpu, ck);
        p->go->weight_free(p->g, gq), p->go->weight_free(p->g, gk);
        free(ccs), free(gcs), free(x), free(wq), free(wk), free(xa), free(go), free(cf), free(gf);
    }
    /* swiglu */
    int inters[] = {5, 512, 1000};
    for (int k = 0; k < 3; k++) {
        int R = 3, I = inters[k];
        float *x = rand_act(dt, (size_t)R * 2 * I, 6.0f);
        void *xa = to_act(dt, x, (size_t)R * 2 * I), *dx = dup_dev(p, xa, (size_t)R * 2 * I * e);
        void *co = malloc((size_t)R * I * e), *go = malloc((size_t)R * I * e), *d = p->go->alloc(p->g, (size_t)R * I * e);
        CHECK(p->co->swiglu(&p->cpu, xa, R, I, co) == PL_OK);
        CHECK(p->go->swiglu(p->g, dx, R, I, d) == PL_OK);
        down(p, go, d, (size_t)R * I * e);
        float *cf = malloc(sizeof(float) * R * I), *gf = malloc(sizeof(float) * R * I);
        from_act(dt, co, (size_t)R * I, cf);
        from_act(dt, go, (size_t)R * I, gf);
        snprintf(what, sizeof what, "swiglu inter %d", I);
        cmp(what, gf, cf, (size_t)R * I, act_tol(dt), 1e-3);
        p->go->free(p->g, d), p->go->free(p->g, dx);
        free(x), free(xa), free(co), free(go), free(cf), free(gf);
    }
    /* add and copy_rows */
    size_t ns[] = {1, 17, 100003};
    for (int k = 0; k < 3; k++) {
        size_t n = ns[k];
        float *h = rand_act(dt, n, 4.0f), *x = rand_act(dt, n, 4.0f);
        void *ha = to_act(dt, h, n), *xa = to_act(dt, x, n);
        void *dh = dup_dev(p, ha, n * e), *dx = dup_dev(p, xa, n * e);
        CHECK(p->co->add(&p->cpu, ha, xa, n) == PL_OK);
        CHECK(p->go->add(p->g, dh, dx, n) == PL_OK);
        void *go = malloc(n * e);
        down(p, go, dh, n * e);
        CHECK_MSG(memcmp(go, ha, n * e) == 0, "add n %zu differs", n);
        p->go->free(p->g, dh), p->go->free(p->g, dx);
        free(h), free(x), free(ha), free(xa), free(go);
    }
    {
        int R = 6, W = 19;
        size_t ss = 41, ds = 23;
        float *x = rand_act(dt, (size_t)R * ss, 1.0f);
        void *xa = to_act(dt, x, (size_t)R * ss), *dx = dup_dev(p, xa, (size_t)R * ss * e);
        void *co = calloc((size_t)R * ds, e), *go = malloc((size_t)R * ds * e), *d = p->go->alloc(p->g, (size_t)R * ds * e);
        CHECK(p->co->copy_rows(&p->cpu, co, ds, xa, ss, R, W) == PL_OK);
        CHECK(p->go->copy_rows(p->g, d, ds, dx, ss, R, W) == PL_OK);
        down(p, go, d, (size_t)R * ds * e);
        CHECK_MSG(memcmp(co, go, (size_t)R * ds * e) == 0, "copy_rows differs");
        p->go->free(p->g, d), p->go->free(p->g, dx);
        free(x), free(xa), free(co), free(go);
    }
}

/* K/V append and paged attention through device pools against host pools: two sequences,
 * prefill chunks that force growth (page size 4), decode steps; pool bytes compared exactly. */
/* One-layer growable pools of p's dtype, in host memory (hp) and on the device (dp), with n
 * sequences in each; *dev_pc (may be NULL) gets the device pool's config. */
static void twin_pools(pair *p, int nkv, int ps, int hd, int n, pl_kv_pools *hp, pl_kv_pools *dp, pl_kv_seq *hs, pl_kv_seq *ds,
                       pl_page_pool_config *dev_pc) {
    pl_page_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.dtype = p->dt, pc.num_kv_heads = nkv, pc.page_size = ps, pc.head_dim = hd, pc.mode = PL_POOL_GROWABLE;
    CHECK_OK(pl_kv_pools_create(&pc, 1, hp, err, sizeof err), err);
    pc.storage = pl_cuda_backend_kv_storage(p->g);
    CHECK_OK(pl_kv_pools_create(&pc, 1, dp, err, sizeof err), err);
    for (int s = 0; s < n; s++) {
        CHECK_OK(pl_kv_seq_init(&hs[s], hp, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&ds[s], dp, err, sizeof err), err);
    }
    if (dev_pc) *dev_pc = pc;
}

/* The host and device twins of one paged attention call: aa with the pools' storage and each
 * side's query and output. */
static void twin_attention(const pl_paged_attention_args *aa, const pl_kv_pools *hp, const pl_kv_pools *dp, const void *hq,
                           void *hout, const void *dq, void *dout, pl_paged_attention_args *ha, pl_paged_attention_args *ga) {
    *ha = *aa, *ga = *aa;
    ha->query = hq, ha->key_pages = pl_page_pool_keys(hp->layers[0]), ha->value_pages = pl_page_pool_values(hp->layers[0]);
    ha->out = hout;
    ga->query = dq, ga->key_pages = pl_page_pool_keys(dp->layers[0]), ga->value_pages = pl_page_pool_values(dp->layers[0]);
    ga->out = dout;
}

static void test_kv_attention(pair *p, int hd) {
    pl_dtype dt = p->dt;
    size_t e = esz(dt);
    int H = 4, Hkv = 2, ps = 4;
    pl_kv_pools hp, dp;
    pl_kv_seq hs[2], ds[2];
    pl_page_pool_config pc;
    twin_pools(p, Hkv, ps, hd, 2, &hp, &dp, hs, ds, &pc);
    int steps[][2] = {{7, 3}, {5, 9}, {1, 1}, {1, 1}, {13, 1}};
    for (size_t st = 0; st < sizeof steps / sizeof steps[0]; st++) {
        int lens[2] = {steps[st][0], steps[st][1]};
        for (int s = 0; s < 2; s++) {
            int n = lens[s];
            size_t stride = (size_t)(H + 2 * Hkv) * hd;
            float *x = rand_act(dt, (size_t)n * stride, 1.0f);
            void *xa = to_act(dt, x, (size_t)n * stride), *dx = dup_dev(p, xa, (size_t)n * stride * e);
            pl_kv_chunk hc = {dt, n, Hkv, hd, (char *)xa + (size_t)H * hd * e, (char *)xa + (size_t)(H + Hkv) * hd * e, stride};
            pl_kv_chunk dc = hc;
            dc.k = (char *)dx + (size_t)H * hd * e;
            dc.v = (char *)dx + (size_t)(H + Hkv) * hd * e;
            CHECK_OK(p->co->kv_append(&p->cpu, &hs[s].layers[0], &hc, err, sizeof err), err);
            CHECK_OK(p->go->kv_append(p->g, &ds[s].layers[0], &dc, err, sizeof err), err);
            CHECK(ds[s].layers[0].offset == hs[s].layers[0].offset);
            CHECK_OK(pl_seq_cache_check(&ds[s].layers[0], err, sizeof err), err);
            p->go->free(p->g, dx);
            free(x), free(xa);
        }
        /* storage identical byte for byte (same ids, same layout) */
        pl_page_pool_stats a, b;
        pl_page_pool_get_stats(hp.layers[0], &a);
        pl_page_pool_get_stats(dp.layers[0], &b);
        CHECK(a.num_pages == b.num_pages && a.capacity_pages == b.capacity_pages && a.growths == b.growths);
        size_t used = (size_t)a.num_pages * Hkv * ps * hd * e;
        void *kd = malloc(used), *vd = malloc(used);
        down(p, kd, pl_page_pool_keys(dp.layers[0]), used);
        down(p, vd, pl_page_pool_values(dp.layers[0]), used);
        CHECK_MSG(memcmp(kd, pl_page_pool_keys(hp.layers[0]), used) == 0 &&
                      memcmp(vd, pl_page_pool_values(hp.layers[0]), used) == 0,
                  "device pool bytes differ after step %zu (growths %lld)", st, (long long)b.growths);
        free(kd), free(vd);
        /* attention for both sequences (query_len runs as the forward pass makes them) */
        const pl_seq_cache *l0[2] = {&hs[0].layers[0], &hs[1].layers[0]};
        int mp = pl_kv_max_pages(l0, 2);
        int32_t *bt = malloc(sizeof(int32_t) * 2 * mp), ctx[2];
        CHECK_OK(pl_kv_build_batch(l0, 2, NULL, mp, bt, ctx, err, sizeof err), err);
        for (int s = 0; s < 2; s++) {
            int n = lens[s];
            float *q = rand_act(dt, (size_t)n * H * hd, 1.0f);
            void *qa = to_act(dt, q, (size_t)n * H * hd), *dq = dup_dev(p, qa, (size_t)n * H * hd * e);
            void *co = malloc((size_t)n * H * hd * e), *go = malloc((size_t)n * H * hd * e);
            void *dout = p->go->alloc(p->g, (size_t)n * H * hd * e);
            pl_paged_attention_args aa;
            memset(&aa, 0, sizeof aa);
            aa.dtype = dt, aa.batch = 1, aa.num_heads = H, aa.num_kv_heads = Hkv, aa.query_len = n, aa.head_dim = hd;
            aa.num_pages = a.num_pages, aa.page_size = ps, aa.max_pages = mp, aa.scale = 0, aa.causal = 1;
            aa.block_table = bt + (size_t)s * mp, aa.context_lens = ctx + s, aa.schedule = PL_ATTN_AUTO;
            pl_paged_attention_args ha, ga;
            twin_attention(&aa, &hp, &dp, qa, co, dq, dout, &ha, &ga);
            CHECK_OK(p->co->paged_attention(&p->cpu, &ha, err, sizeof err), err);
            CHECK_OK(p->go->paged_attention(p->g, &ga, err, sizeof err), err);
            down(p, go, dout, (size_t)n * H * hd * e);
            float *cf = malloc(sizeof(float) * n * H * hd), *gf = malloc(sizeof(float) * n * H * hd);
            from_act(dt, co, (size_t)n * H * hd, cf);
            from_act(dt, go, (size_t)n * H * hd, gf);
            char what[96];
            snprintf(what, sizeof what, "paged attention hd %d step %zu seq %d", hd, st, s);
            cmp(what, gf, cf, (size_t)n * H * hd, dt == PL_BF16 ? 2e-2 : 1e-4, 1e-2);
            p->go->free(p->g, dout), p->go->free(p->g, dq);
            free(q), free(qa), free(co), free(go), free(cf), free(gf);
        }
        free(bt);
    }
    /* a chunk that does not fit the pool's shape is refused without change */
    pl_kv_chunk bad = {dt, 1, Hkv + 1, hd, pl_page_pool_keys(dp.layers[0]), pl_page_pool_keys(dp.layers[0]), 0};
    int off = ds[0].layers[0].offset;
    CHECK_ERR(p->go->kv_append(p->g, &ds[0].layers[0], &bad, err, sizeof err), PL_ERR_INVALID, "kv chunk", err);
    CHECK(ds[0].layers[0].offset == off);
    for (int s = 0; s < 2; s++) {
        pl_kv_seq_destroy(&hs[s]);
        pl_kv_seq_destroy(&ds[s]);
    }
    pl_kv_pools_destroy(&hp);
    pl_kv_pools_destroy(&dp);
    /* a capped device pool: budget up front, exhaustion is PL_ERR_NO_PAGES */
    pc.mode = PL_POOL_CAPPED;
    pc.capped_pages = 2;
    pl_page_pool *cp = NULL;
    CHECK_OK(pl_page_pool_create(&pc, &cp, err, sizeof err), err);
    if (cp) {
        int32_t id;
        CHECK_OK(pl_page_pool_alloc(cp, &id, err, sizeof err), err);
        CHECK_OK(pl_page_pool_alloc(cp, &id, err, sizeof err), err);
        CHECK_ERR(pl_page_pool_alloc(cp, &id, err, sizeof err), PL_ERR_NO_PAGES, "", err);
        pl_page_pool_destroy(cp);
    }
}

/* q/k norm + RoPE with q_out, then the K/V appends of its rows, as the paged forward pass
 * does: the backend defers the rope and launches it with the appends in one kernel when they
 * copy exactly its k/v rows, else alone before them. Three sequences; mode 0: appends in row
 * order (fused), 1: in reverse order (chunks do not join: the rope goes out before the first
 * batch), 2: the last sequence not appended (rows differ: rope, then appends), 3: as 0, the
 * flush coming from paged attention reading q_out and the pages. Checked: q_out and the k
 * columns against the CPU backend, q, v columns and padding unchanged, and the device pool
 * byte for byte against a host pool fed the device's own rows. */
/* A bf16 decode attention over long contexts and the matmul of its output (a layer's output
 * projection), against the CPU backend: batches of 1-12 rows (the skinny GEMM kernels' range
 * and past it), the split heuristic and forced split counts (the backend's split workspace
 * must fit them), a short sequence among long ones (empty splits), the output poisoned with
 * NaN before each call. */
static void test_attention_gemm(pair *p) {
    const int H = 8, Hkv = 2, hd = 128, ps = 16, K = H * hd, N = 300, MAXB = 12;
    static const int batches[] = {1, 2, 4, 8, 12};
    float *w = rand_act(PL_F32, (size_t)N * K, 0.05f);
    void *cw = make_weight(p, 0, w, N, K, 1, 1), *gw = make_weight(p, 1, w, N, K, 1, 1);
    for (size_t bi = 0; bi < sizeof batches / sizeof batches[0]; bi++) {
        const int M = batches[bi];
        pl_kv_pools hp, dp;
        pl_kv_seq hs[MAXB], ds[MAXB];
        twin_pools(p, Hkv, ps, hd, M, &hp, &dp, hs, ds, NULL);
        for (int s = 0; s < M; s++) { /* contexts 40 (the short one) and 213-645 */
            const int n = s == 1 ? 40 : 213 + (s * 173) % 433;
            const size_t stride = (size_t)(H + 2 * Hkv) * hd;
            float *x = rand_act(PL_BF16, (size_t)n * stride, 1.0f);
            void *xa = to_act(PL_BF16, x, (size_t)n * stride), *dx = dup_dev(p, xa, (size_t)n * stride * 2);
            pl_kv_chunk hc = {PL_BF16, n, Hkv, hd, (char *)xa + (size_t)H * hd * 2, (char *)xa + (size_t)(H + Hkv) * hd * 2, stride};
            pl_kv_chunk dc = hc;
            dc.k = (char *)dx + (size_t)H * hd * 2;
            dc.v = (char *)dx + (size_t)(H + Hkv) * hd * 2;
            CHECK_OK(p->co->kv_append(&p->cpu, &hs[s].layers[0], &hc, err, sizeof err), err);
            CHECK_OK(p->go->kv_append(p->g, &ds[s].layers[0], &dc, err, sizeof err), err);
            p->go->free(p->g, dx);
            free(x), free(xa);
        }
        const pl_seq_cache *l0[MAXB];
        for (int s = 0; s < M; s++) l0[s] = &hs[s].layers[0];
        const int mp = pl_kv_max_pages(l0, M);
        int32_t *bt = malloc(sizeof(int32_t) * (size_t)M * mp), ctx[MAXB];
        CHECK_OK(pl_kv_build_batch(l0, M, NULL, mp, bt, ctx, err, sizeof err), err);
        pl_page_pool_stats st;
        pl_page_pool_get_stats(hp.layers[0], &st);
        float *q = rand_act(PL_BF16, (size_t)M * K, 1.0f);
        void *qa = to_act(PL_BF16, q, (size_t)M * K), *dq = dup_dev(p, qa, (size_t)M * K * 2);
        void *co = malloc((size_t)M * K * 2), *go = malloc((size_t)M * K * 2), *cy = malloc((size_t)M * N * 2),
             *gy = malloc((size_t)M * N * 2);
        void *dout = p->go->alloc(p->g, (size_t)M * K * 2), *dy = p->go->alloc(p->g, (size_t)M * N * 2);
        float *cf = malloc(sizeof(float) * M * N), *gf = malloc(sizeof(float) * M * N);
        float *caf = malloc(sizeof(float) * M * K), *gaf = malloc(sizeof(float) * M * K);
        pl_paged_attention_args aa;
        memset(&aa, 0, sizeof aa);
        aa.dtype = PL_BF16, aa.batch = M, aa.num_heads = H, aa.num_kv_heads = Hkv, aa.query_len = 1, aa.head_dim = hd;
        aa.num_pages = st.num_pages, aa.page_size = ps, aa.max_pages = mp, aa.causal = 1;
        aa.block_table = bt, aa.context_lens = ctx, aa.schedule = PL_ATTN_AUTO;
        pl_paged_attention_args ha, ga;
        twin_attention(&aa, &hp, &dp, qa, co, dq, dout, &ha, &ga);
        CHECK_OK(p->co->paged_attention(&p->cpu, &ha, err, sizeof err), err);
        CHECK_OK(p->co->matmul(&p->cpu, co, M, cw, cy, 0, err, sizeof err), err);
        from_act(PL_BF16, cy, (size_t)M * N, cf);
        from_act(PL_BF16, co, (size_t)M * K, caf);
        static const int splits[] = {0, 3, 8};
        for (int si = 0; si < 7; si++) {
            /* old keys read before the PDL wait (default), then after it; splits from the step's
             * contexts (default) or forced; last, from the shapes alone (pl_cuda_backend_attn_split_rule) */
            pl_cuda_backend_attn_splits(p->g, si < 6 ? splits[si % 3] : 0);
            pl_cuda_backend_attn_early(p->g, si == 3 || si == 4 || si == 5);
            pl_cuda_backend_attn_split_rule(p->g, si == 6);
            CHECK(cudaMemsetAsync(dout, 0xff, (size_t)M * K * 2, p->st) == cudaSuccess); /* NaN */
            CHECK_OK(p->go->paged_attention(p->g, &ga, err, sizeof err), err);
            CHECK_OK(p->go->matmul(p->g, dout, M, gw, dy, 0, err, sizeof err), err);
            down(p, gy, dy, (size_t)M * N * 2);
            down(p, go, dout, (size_t)M * K * 2);
            from_act(PL_BF16, gy, (size_t)M * N, gf);
            from_act(PL_BF16, go, (size_t)M * K, gaf);
            char what[128];
            const char *when = si < 3 ? "old keys early" : si < 6 ? "old keys after the wait" : "splits from the shapes";
            snprintf(what, sizeof what, "attention -> matmul, %d rows, splits %d, %s: attention", M, splits[si % 3], when);
            cmp(what, gaf, caf, (size_t)M * K, 2e-2, 1e-2);
            snprintf(what, sizeof what, "attention -> matmul, %d rows, splits %d, %s: matmul", M, splits[si % 3], when);
            cmp(what, gf, cf, (size_t)M * N, 2e-2, 1e-2);
        }
        pl_cuda_backend_attn_splits(p->g, 0);
        pl_cuda_backend_attn_early(p->g, 0);
        pl_cuda_backend_attn_split_rule(p->g, 0);
        p->go->free(p->g, dout), p->go->free(p->g, dy), p->go->free(p->g, dq);
        free(q), free(qa), free(co), free(go), free(cy), free(gy), free(cf), free(gf), free(caf), free(gaf), free(bt);
        for (int s = 0; s < M; s++) {
            pl_kv_seq_destroy(&hs[s]);
            pl_kv_seq_destroy(&ds[s]);
        }
        pl_kv_pools_destroy(&hp);
        pl_kv_pools_destroy(&dp);
    }
    p->co->weight_free(&p->cpu, cw);
    p->go->weight_free(p->g, gw);
    free(w);
}

static void test_rope_append(pair *p, int hd) {
    pl_dtype dt = p->dt;
    const size_t e = esz(dt);
    enum { S = 3 };
    const int nq = 4, nkv = 2, ps = 4;
    const size_t stride = (size_t)(nq + 2 * nkv) * hd + 2; /* padded rows */
    pl_kv_pools hp, dp;
    pl_kv_seq hs[S], ds[S];
    twin_pools(p, nkv, ps, hd, S, &hp, &dp, hs, ds, NULL);
    float *wq = rand_act(PL_F32, hd, 1.0f), *wk = rand_act(PL_F32, hd, 1.0f);
    void *cq = make_weight(p, 0, wq, 1, hd, 1, 0), *ck = make_weight(p, 0, wk, 1, hd, 1, 0);
    void *gq = make_weight(p, 1, wq, 1, hd, 1, 0), *gk = make_weight(p, 1, wk, 1, hd, 1, 0);
    static const int steps[][S] = {{3, 1, 2}, {1, 1, 1}, {2, 5, 1}, {1, 1, 1}, {6, 2, 9}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    char what[128];
    for (size_t st = 0; st < sizeof steps / sizeof steps[0]; st++) {
        const int mode = (int)(st % 4);
        int row_start[S], rows = 0;
        for (int s = 0; s < S; s++) row_start[s] = rows, rows += steps[st][s];
        int32_t *pos = malloc(sizeof(int32_t) * rows);
        for (int s = 0; s < S; s++)
            for (int t = 0; t < steps[st][s]; t++) pos[row_start[s] + t] = ds[s].layers[0].offset + t;
        float *ccs = malloc(sizeof(float) * rows * hd), *dcs = p->go->alloc(p->g, sizeof(float) * rows * hd);
        CHECK(p->co->rope_table(&p->cpu, pos, rows, hd, 1e6, ccs) == PL_OK);
        CHECK(cudaMemcpyAsync(dcs, ccs, sizeof(float) * rows * hd, cudaMemcpyHostToDevice, p->st) == cudaSuccess); /* same table */
        const size_t nx = (size_t)rows * stride, nqo = (size_t)rows * nq * hd;
        float *x = rand_act(dt, nx, 2.0f);
        void *xa = to_act(dt, x, nx), *dx = dup_dev(p, xa, nx * e), *dq = p->go->alloc(p->g, nqo * e);
        /* device: the rope is deferred, then the appends of its rows */
        CHECK(p->go->qk_norm_rope(p->g, dx, rows, stride, nq, nkv, hd, gq, gk, 1e-6f, dcs, dq) == PL_OK);
        int appended[S] = {0};
        for (int i = 0; i < S; i++) {
            const int s = mode == 1 ? S - 1 - i : i;
            if (mode == 2 && s == S - 1) continue;
            const char *r0 = (const char *)dx + (size_t)row_start[s] * stride * e;
            pl_kv_chunk dc = {dt, steps[st][s], nkv, hd, r0 + (size_t)nq * hd * e, r0 + (size_t)(nq + nkv) * hd * e, stride};
            CHECK_OK(p->go->kv_append(p->g, &ds[s].layers[0], &dc, err, sizeof err), err);
            appended[s] = 1;
        }
        /* mode 3: attention of sequence 0 over its pages (the launch flushes the rope and appends) */
        const int n0 = steps[st][0];
        int32_t *bt = NULL, ctx0 = 0;
        void *dout = NULL;
        pl_paged_attention_args aa;
        memset(&aa, 0, sizeof aa);
        if (mode == 3) {
            const pl_seq_cache *l0[1] = {&ds[0].layers[0]};
            const int mp = pl_kv_max_pages(l0, 1);
            bt = malloc(sizeof(int32_t) * (mp > 0 ? mp : 1));
            CHECK_OK(pl_kv_build_batch(l0, 1, NULL, mp, bt, &ctx0, err, sizeof err), err);
            pl_page_pool_stats ps_;
            pl_page_pool_get_stats(dp.layers[0], &ps_);
            aa.dtype = dt, aa.batch = 1, aa.num_heads = nq, aa.num_kv_heads = nkv, aa.query_len = n0, aa.head_dim = hd;
            aa.num_pages = ps_.capacity_pages, aa.page_size = ps, aa.max_pages = mp, aa.scale = 0, aa.causal = 1;
            aa.block_table = bt, aa.context_lens = &ctx0, aa.schedule = PL_ATTN_AUTO;
            pl_paged_attention_args ga = aa;
            dout = p->go->alloc(p->g, (size_t)n0 * nq * hd * e);
            ga.query = dq, ga.key_pages = pl_page_pool_keys(dp.layers[0]), ga.value_pages = pl_page_pool_values(dp.layers[0]);
            ga.out = dout;
            CHECK_OK(p->go->paged_attention(p->g, &ga, err, sizeof err), err);
        }
        void *gx = malloc(nx * e), *gqo = malloc(nqo * e), *cqo = malloc(nqo * e);
        down(p, gx, dx, nx * e);
        down(p, gqo, dq, nqo * e);
        /* the CPU's rope of the same rows */
        CHECK(p->co->qk_norm_rope(&p->cpu, xa, rows, stride, nq, nkv, hd, cq, ck, 1e-6f, ccs, cqo) == PL_OK);
        float *gf = malloc(sizeof(float) * nx), *cf = malloc(sizeof(float) * nx);
        float *gqf = malloc(sizeof(float) * nqo), *cqf = malloc(sizeof(float) * nqo);
        from_act(dt, gx, nx, gf);
        from_act(dt, xa, nx, cf);
        from_act(dt, gqo, nqo, gqf);
        from_act(dt, cqo, nqo, cqf);
        snprintf(what, sizeof what, "rope+append mode %d hd %d step %zu: q_out", mode, hd, st);
        cmp(what, gqf, cqf, nqo, act_tol(dt), 1e-3);
        int same = 1;
        for (int r = 0; r < rows; r++)
            for (size_t i = 0; i < stride; i++) {
                const size_t o = (size_t)r * stride + i;
                if (i >= (size_t)nq * hd && i < (size_t)(nq + nkv) * hd) continue;
                same &= gf[o] == x[o]; /* q heads (with q_out), v heads and padding stay */
                gf[o] = cf[o];
            }
        CHECK_MSG(same, "rope+append mode %d hd %d step %zu: q/v columns or padding changed", mode, hd, st);
        snprintf(what, sizeof what, "rope+append mode %d hd %d step %zu: k in place", mode, hd, st);
        cmp(what, gf, cf, nx, act_tol(dt), 1e-3);
        /* the host pool gets the device's own rows: pool bytes must be equal */
        for (int s = 0; s < S; s++) {
            if (!appended[s]) continue;
            const char *r0 = (const char *)gx + (size_t)row_start[s] * stride * e;
            pl_kv_chunk hc = {dt, steps[st][s], nkv, hd, r0 + (size_t)nq * hd * e, r0 + (size_t)(nq + nkv) * hd * e, stride};
            CHECK_OK(p->co->kv_append(&p->cpu, &hs[s].layers[0], &hc, err, sizeof err), err);
            CHECK(ds[s].layers[0].offset == hs[s].layers[0].offset);
        }
        pl_page_pool_stats a, b;
        pl_page_pool_get_stats(hp.layers[0], &a);
        pl_page_pool_get_stats(dp.layers[0], &b);
        CHECK(a.num_pages == b.num_pages && a.capacity_pages == b.capacity_pages);
        const size_t used = (size_t)a.num_pages * nkv * ps * hd * e;
        void *kd = malloc(used ? used : 1), *vd = malloc(used ? used : 1);
        down(p, kd, pl_page_pool_keys(dp.layers[0]), used);
        down(p, vd, pl_page_pool_values(dp.layers[0]), used);
        CHECK_MSG(memcmp(kd, pl_page_pool_keys(hp.layers[0]), used) == 0, "rope+append mode %d hd %d step %zu: key pages differ",
                  mode, hd, st);
        CHECK_MSG(memcmp(vd, pl_page_pool_values(hp.layers[0]), used) == 0,
                  "rope+append mode %d hd %d step %zu: value pages differ", mode, hd, st);
        if (mode == 3) { /* the same attention on the host, from the device's q and pages */
            pl_paged_attention_args ha = aa;
            void *co = malloc((size_t)n0 * nq * hd * e), *go = malloc((size_t)n0 * nq * hd * e);
            ha.query = gqo, ha.key_pages = pl_page_pool_keys(hp.layers[0]), ha.value_pages = pl_page_pool_values(hp.layers[0]);
            ha.out = co;
            CHECK_OK(p->co->paged_attention(&p->cpu, &ha, err, sizeof err), err);
            down(p, go, dout, (size_t)n0 * nq * hd * e);
            float *af = malloc(sizeof(float) * n0 * nq * hd), *bf = malloc(sizeof(float) * n0 * nq * hd);
            from_act(dt, co, (size_t)n0 * nq * hd, af);
            from_act(dt, go, (size_t)n0 * nq * hd, bf);
            snprintf(what, sizeof what, "rope+append hd %d step %zu: attention after the flush", hd, st);
            cmp(what, bf, af, (size_t)n0 * nq * hd, dt == PL_BF16 ? 2e-2 : 1e-4, 1e-2);
            p->go->free(p->g, dout);
            free(co), free(go), free(af), free(bf);
        }
        p->go->free(p->g, dq), p->go->free(p->g, dx), p->go->free(p->g, dcs);
        free(pos), free(ccs), free(x), free(xa), free(gx), free(gqo), free(cqo), free(gf), free(cf), free(gqf), free(cqf);
        free(kd), free(vd), free(bt);
    }
    for (int s = 0; s < S; s++) {
        pl_kv_seq_destroy(&hs[s]);
        pl_kv_seq_destroy(&ds[s]);
    }
    pl_kv_pools_destroy(&hp);
    pl_kv_pools_destroy(&dp);
    p->co->weight_free(&p->cpu, cq), p->co->weight_free(&p->cpu, ck);
    p->go->weight_free(p->g, gq), p->go->weight_free(p->g, gk);
    free(wq), free(wk);
}

/* A decode step's q/k norm + RoPE and K/V append done by the decode attention kernel
 * (pl_cuda_attn_rope; pl_cuda_backend_attn_rope always) against the same step with their own
 * kernel first (never), on twin device pools filled alike: attention outputs
 * (poisoned with NaN first) and every used page byte for byte, two steps each. fused: whether
 * the attention must have taken them (q_out, poisoned, stays untouched), else the backend
 * falls back to the rope kernel. */
static void rope_attention_case(pair *p, int nq, int nkv, int ps, int S, const int *ctx0, int warps, int copy, int units,
                                int early, int fused) {
    enum { MAXS = 8 };
    const int hd = 128;
    const size_t e = 2, stride = (size_t)(nq + 2 * nkv) * hd + 8; /* padded rows */
    pl_kv_pools hp[2], dp[2];
    pl_kv_seq hs[2][MAXS], ds[2][MAXS];
    for (int k = 0; k < 2; k++) twin_pools(p, nkv, ps, hd, S, &hp[k], &dp[k], hs[k], ds[k], NULL);
    float *wq = rand_act(PL_F32, hd, 1.0f), *wk = rand_act(PL_F32, hd, 1.0f);
    void *gq = make_weight(p, 1, wq, 1, hd, 1, 0), *gk = make_weight(p, 1, wk, 1, hd, 1, 0);
    pl_cuda_backend_attn_warps(p->g, warps);
    pl_cuda_backend_attn_copy(p->g, copy);
    pl_cuda_backend_attn_units(p->g, units);
    pl_cuda_backend_attn_early(p->g, early);
    /* contexts before the steps: the same random rows appended to both pool sets */
    for (int s = 0; s < S; s++) {
        const int n = ctx0[s] - 1;
        if (n <= 0) continue;
        float *x = rand_act(PL_BF16, (size_t)n * stride, 2.0f);
        void *xa = to_act(PL_BF16, x, (size_t)n * stride), *dx = dup_dev(p, xa, (size_t)n * stride * e);
        pl_kv_chunk c = {PL_BF16, n, nkv, hd, (char *)dx + (size_t)nq * hd * e, (char *)dx + (size_t)(nq + nkv) * hd * e, stride};
        for (int k = 0; k < 2; k++) CHECK_OK(p->go->kv_append(p->g, &ds[k][s].layers[0], &c, err, sizeof err), err);
        CHECK_OK(pl_cuda_backend_sync(p->g, err, sizeof err), err);
        p->go->free(p->g, dx);
        free(x), free(xa);
    }
    char what[160];
    int fused_steps = 0;
    for (int step = 0; step < 2; step++) {
        pl_cuda_backend_attn_lean(p->g, step); /* step 0 AUTO (rows past R zeroed once), step 1 each unit */
        int32_t pos[MAXS];
        for (int s = 0; s < S; s++) pos[s] = ds[0][s].layers[0].offset;
        float *ccs = malloc(sizeof(float) * S * hd), *dcs = p->go->alloc(p->g, sizeof(float) * S * hd);
        CHECK(p->co->rope_table(&p->cpu, pos, S, hd, 1e6, ccs) == PL_OK);
        CHECK(cudaMemcpyAsync(dcs, ccs, sizeof(float) * S * hd, cudaMemcpyHostToDevice, p->st) == cudaSuccess);
        const size_t nx = (size_t)S * stride, nqo = (size_t)S * nq * hd;
        float *x = rand_act(PL_BF16, nx, 2.0f);
        void *xa = to_act(PL_BF16, x, nx);
        void *out[2], *qo[2], *keys[2], *vals[2];
        size_t used[2];
        int grew = 0;
        for (int k = 0; k < 2; k++) { /* k = 0: rope kernel first, 1: fused */
            pl_cuda_backend_attn_rope(p->g, k ? 2 : 1); /* always / never */
            void *dx = dup_dev(p, xa, nx * e), *dq = p->go->alloc(p->g, nqo * e), *dout = p->go->alloc(p->g, nqo * e);
            CHECK(cudaMemsetAsync(dq, 0xff, nqo * e, p->st) == cudaSuccess && cudaMemsetAsync(dout, 0xff, nqo * e, p->st) == cudaSuccess); /* NaN */
            CHECK(p->go->qk_norm_rope(p->g, dx, S, stride, nq, nkv, hd, gq, gk, 1e-6f, dcs, dq) == PL_OK);
            const pl_seq_cache *l0[MAXS];
            pl_page_pool_stats g0;
            pl_page_pool_get_stats(dp[k].layers[0], &g0);
            for (int s = 0; s < S; s++) {
                const char *r0 = (const char *)dx + (size_t)s * stride * e;
                pl_kv_chunk c = {PL_BF16, 1, nkv, hd, r0 + (size_t)nq * hd * e, r0 + (size_t)(nq + nkv) * hd * e, stride};
                CHECK_OK(p->go->kv_append(p->g, &ds[k][s].layers[0], &c, err, sizeof err), err);
                l0[s] = &ds[k][s].layers[0];
            }
            const int mp = pl_kv_max_pages(l0, S);
            int32_t *bt = malloc(sizeof(int32_t) * S * mp), ctx[MAXS];
            CHECK_OK(pl_kv_build_batch(l0, S, NULL, mp, bt, ctx, err, sizeof err), err);
            pl_page_pool_stats st;
            pl_page_pool_get_stats(dp[k].layers[0], &st);
            pl_paged_attention_args ga;
            memset(&ga, 0, sizeof ga);
            ga.dtype = PL_BF16, ga.batch = S, ga.num_heads = nq, ga.num_kv_heads = nkv, ga.query_len = 1, ga.head_dim = hd;
            ga.num_pages = st.capacity_pages, ga.page_size = ps, ga.max_pages = mp, ga.scale = 0, ga.causal = 1;
            ga.block_table = bt, ga.context_lens = ctx, ga.schedule = PL_ATTN_AUTO;
            ga.query = dq, ga.key_pages = pl_page_pool_keys(dp[k].layers[0]), ga.value_pages = pl_page_pool_values(dp[k].layers[0]);
            ga.out = dout;
            CHECK_OK(p->go->paged_attention(p->g, &ga, err, sizeof err), err);
            used[k] = (size_t)st.num_pages * nkv * ps * hd * e;
            grew = st.growths != g0.growths; /* a growth may break the appends' batch: then the rope kernel runs */
            out[k] = malloc(nqo * e), qo[k] = malloc(nqo * e), keys[k] = malloc(used[k] + 1), vals[k] = malloc(used[k] + 1);
            down(p, out[k], dout, nqo * e);
            down(p, qo[k], dq, nqo * e);
            down(p, keys[k], pl_page_pool_keys(dp[k].layers[0]), used[k]);
            down(p, vals[k], pl_page_pool_values(dp[k].layers[0]), used[k]);
            p->go->free(p->g, dx), p->go->free(p->g, dq), p->go->free(p->g, dout);
            free(bt);
        }
        snprintf(what, sizeof what, "fused rope: %d/%d heads, page %d, %d seqs, warps %d copy %d units %d early %d, step %d (lean %d)",
                 nq, nkv, ps, S, warps, copy, units, early, step, !step);
        CHECK_MSG(memcmp(out[0], out[1], nqo * e) == 0, "%s: attention outputs differ", what);
        CHECK_MSG(used[0] == used[1] && memcmp(keys[0], keys[1], used[0]) == 0 && memcmp(vals[0], vals[1], used[0]) == 0,
                  "%s: pages differ", what);
        int untouched = 1;
        for (size_t i = 0; i < nqo * e; i++) untouched &= ((unsigned char *)qo[1])[i] == 0xff;
        CHECK_MSG(grew || untouched == fused, "%s: q_out %s (fusion expected: %d)", what, untouched ? "untouched" : "written",
                  fused);
        fused_steps += untouched;
        float *of = malloc(sizeof(float) * nqo);
        from_act(PL_BF16, out[1], nqo, of);
        int finite = 1;
        for (size_t i = 0; i < nqo; i++) finite &= isfinite(of[i]) != 0;
        CHECK_MSG(finite, "%s: output not finite", what);
        for (int k = 0; k < 2; k++) free(out[k]), free(qo[k]), free(keys[k]), free(vals[k]);
        p->go->free(p->g, dcs);
        free(of), free(ccs), free(x), free(xa);
    }
    CHECK_MSG(fused_steps > 0 || !fused, "fused rope: %d/%d heads, page %d: no step fused", nq, nkv, ps);
    pl_cuda_backend_attn_lean(p->g, 0);
    pl_cuda_backend_attn_rope(p->g, 0);
    pl_cuda_backend_attn_warps(p->g, 0);
    pl_cuda_backend_attn_copy(p->g, 0);
    pl_cuda_backend_attn_units(p->g, 0);
    pl_cuda_backend_attn_early(p->g, 0);
    for (int k = 0; k < 2; k++) {
        for (int s = 0; s < S; s++) {
            pl_kv_seq_destroy(&hs[k][s]);
            pl_kv_seq_destroy(&ds[k][s]);
        }
        pl_kv_pools_destroy(&hp[k]);
        pl_kv_pools_destroy(&dp[k]);
    }
    p->go->weight_free(p->g, gq), p->go->weight_free(p->g, gk);
    free(wq), free(wk);
}

static void test_rope_attention(pair *p) {
    static const int c1[] = {1, 17, 40}, c2[] = {9, 8, 100, 300}, c3[] = {700, 33}, c4[] = {50, 130, 260, 16, 600, 1, 77, 64},
                     c5[] = {20, 5}, c6[] = {3, 4, 5, 6, 7};
    rope_attention_case(p, 8, 2, 16, 3, c1, 0, 0, 0, 0, 1);  /* AUTO: one 8-warp CTA a unit */
    rope_attention_case(p, 8, 2, 16, 3, c1, 4, 2, 0, 0, 1);  /* 4 warps, TMA boxes */
    rope_attention_case(p, 4, 2, 8, 4, c2, 8, 0, 0, 0, 1);   /* cp.async (page 8), 8 warps, 2 heads a group */
    rope_attention_case(p, 32, 2, 16, 2, c3, 4, 2, 0, 1, 1); /* 16 heads a group, splits, old keys after the wait */
    rope_attention_case(p, 8, 2, 16, 8, c4, 4, 2, 3, 0, 1);  /* 3 units a CTA, TMA */
    rope_attention_case(p, 8, 2, 32, 8, c4, 4, 1, 2, 0, 1);  /* 2 units a CTA, cp.async */
    rope_attention_case(p, 32, 1, 16, 2, c5, 0, 0, 0, 0, 0); /* 32 heads a group: the rope kernel */
    rope_attention_case(p, 8, 2, 16, 5, c6, 4, 0, 9, 0, 1);  /* 9 units a CTA, short units: new rows wait their turn */
}

/* Device sampling against pl_sampler_sample with the same uniform draws. */
static void test_sampler(pair *p) {
    static const int vocabs[] = {1, 7, 1000, 151936};
    static const pl_sampler_params ps[] = {{0, 0, 1, 11},     {0.7f, 0, 1, 12},    {1.0f, 1, 1, 13},  {0.8f, 5, 1, 14},
                                           {1.0f, 40, 0.9f, 15}, {1.0f, 0, 0.5f, 16}, {0.9f, 200000, 1, 17},
                                           {1.3f, 0, 0.95f, 18}, {0.6f, 50, 0.3f, 19}};
    const int np = (int)(sizeof ps / sizeof ps[0]);
    int total = 0, agree = 0, greedy_bad = 0;
    for (size_t vi = 0; vi < sizeof vocabs / sizeof vocabs[0]; vi++) {
        int V = vocabs[vi], R = 6;
        size_t ld = (size_t)V + 3;
        float *lg = malloc(sizeof(float) * ld * R);
        for (int r = 0; r < R; r++)
            for (int i = 0; i < V; i++) {
                float x = runif() * (r % 3 == 0 ? 8.0f : 3.0f);
                if (r % 2) x = pl_bf16_round(x); /* ties, as bf16 logits have */
                lg[(size_t)r * ld + i] = x;
            }
        if (V > 10) { /* NaN and -inf entries, and an exact duplicate maximum */
            lg[3 * ld + 2] = NAN;
            lg[3 * ld + 5] = -INFINITY;
            lg[5 * ld + 9] = 30.0f;
            lg[5 * ld + 4] = 30.0f;
        }
        float *dl = dup_dev(p, lg, sizeof(float) * ld * R);
        for (int k = 0; k < np; k++)
            for (int trial = 0; trial < 3; trial++) {
                pl_cuda_sample_params sp[6];
                int32_t got[6], want[6];
                for (int r = 0; r < R; r++) {
                    pl_sampler_params q = ps[k];
                    q.seed = ps[k].seed * 1000 + (uint64_t)(trial * 10 + r);
                    pl_sampler *cs = NULL;
                    CHECK_OK(pl_sampler_create(&q, V, &cs, err, sizeof err), err);
                    want[r] = cs ? pl_sampler_sample(cs, lg + (size_t)r * ld) : -1;
                    pl_sampler_free(cs);
                    pl_mt19937 rng;
                    pl_mt_seed(&rng, q.seed);
                    sp[r].temperature = q.temperature, sp[r].top_k = q.top_k, sp[r].top_p = q.top_p;
                    sp[r].u = pl_mt_random(&rng);
                }
                CHECK_OK(pl_cuda_sample(p->g, dl, ld, R, V, sp, got, err, sizeof err), err);
                for (int r = 0; r < R; r++) {
                    /* with a NaN logit the CPU sampler's sum is NaN: only greedy is defined */
                    if (V > 10 && r == 3 && ps[k].temperature > 0) continue;
                    total++;
                    agree += got[r] == want[r];
                    if (ps[k].temperature <= 0 || ps[k].top_k == 1) greedy_bad += got[r] != want[r];
                    CHECK(got[r] >= 0 && got[r] < V);
                }
            }
        /* bad arguments */
        pl_cuda_sample_params bad = {1.0f, -1, 1.0f, 0.5};
        int32_t t;
        CHECK_ERR(pl_cuda_sample(p->g, dl, ld, 1, V, &bad, &t, err, sizeof err), PL_ERR_INVALID, "top_k", err);
        bad.top_k = 0, bad.u = 1.0;
        CHECK_ERR(pl_cuda_sample(p->g, dl, ld, 1, V, &bad, &t, err, sizeof err), PL_ERR_INVALID, "u", err);
        bad.u = 0.5, bad.top_p = 0;
        CHECK_ERR(pl_cuda_sample(p->g, dl, ld, 1, V, &bad, &t, err, sizeof err), PL_ERR_INVALID, "top_p", err);
        bad.top_p = 1;
        CHECK_ERR(pl_cuda_sample(p->g, dl, (size_t)V - 1, 1, V, &bad, &t, err, sizeof err), PL_ERR_INVALID, "ld", err);
        p->go->free(p->g, dl);
        free(lg);
    }
    { /* greedy edge cases against pl_argmax: all NaN, -0.0 before +0.0, -inf only, NaN first */
        enum { V = 7, R = 4 };
        const float z = -0.0f;
        float lg[R * V] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, -1, z, 0.0f, -2, -3, z, -5,
                           -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                           NAN, 1, 2, NAN, 2, -1, 0};
        float *dl = dup_dev(p, lg, sizeof lg);
        pl_cuda_sample_params sp[R];
        int32_t got[R];
        for (int r = 0; r < R; r++) sp[r] = (pl_cuda_sample_params){0.0f, 0, 1.0f, 0.25};
        CHECK_OK(pl_cuda_sample(p->g, dl, V, R, V, sp, got, err, sizeof err), err);
        for (int r = 0; r < R; r++) CHECK_MSG(got[r] == pl_argmax(lg + r * V, V), "greedy row %d: %d, pl_argmax %d", r, got[r],
                                              pl_argmax(lg + r * V, V));
        p->go->free(p->g, dl);
    }
    printf("  sampler: %d of %d draws equal to the CPU sampler\n", agree, total);
    CHECK_MSG(greedy_bad == 0, "greedy / top-1 disagree on %d draws", greedy_bad);
    CHECK_MSG(agree >= total * 97 / 100, "device sampling agrees on %d of %d draws", agree, total);
}

/* The greedy head (LM head and argmax in one kernel, no logits stored) against pl_argmax of
 * the same kernel's f32 logits, which it must equal exactly: odd N and K, 2-64 rows, K splits
 * (partials and clusters), both copy paths, ties across tiles (rows copied), all-equal rows,
 * a NaN row; 1 and 65 rows are left to matmul + sample. */
static void test_head_greedy(pair *p) {
    static const int shapes[][3] = {{1000, 96, 2},   {4099, 128, 7},   {40000, 128, 16}, {2571, 40, 33}, {1001, 2560, 64},
                                    {300, 264, 17},  {5003, 512, 64},  {129, 8, 5},      {700, 1032, 3}, {151, 2056, 48}};
    const int ns = (int)(sizeof shapes / sizeof shapes[0]);
    int checked = 0;
    for (int s = 0; s < 4 * ns; s++) {
        const int si = s % ns, pass = s / ns; /* default, most splits, cp.async, TMA */
        pl_cuda_backend_tune_tile(p->g, pass == 1 ? 4 : 0, pass == 1 ? 64 : 0, pass == 1 ? 1 : 0);
        pl_cuda_backend_tile_copy(p->g, pass == 2 ? 1 : pass == 3 ? 2 : 0);
        const int N = shapes[si][0], K = shapes[si][1], M = shapes[si][2];
        float *w = rand_act(PL_F32, (size_t)N * K, 1.0f), *x = rand_act(p->dt, (size_t)M * K, 1.0f);
        if (si == 0) /* rows 9 on all equal: a tie across every tile */
            for (int r = 10; r < N; r++) memcpy(w + (size_t)r * K, w + 9 * (size_t)K, sizeof(float) * K);
        if (si == 7) /* every row equal: id 0 */
            for (int r = 1; r < N; r++) memcpy(w + (size_t)r * K, w, sizeof(float) * K);
        if (si == 3) x[K + 5] = NAN; /* row 1: NaN logits only, id 0 */
        if (si == 5) /* a later tile's row equals an earlier one's, and wins */
            for (int k = 0; k < K; k++) w[(size_t)290 * K + k] = w[(size_t)3 * K + k] = 4.0f * x[k];
        void *gw = make_weight(p, 1, w, N, K, 1, 1);
        if (!gw) return;
        void *xa = to_act(p->dt, x, (size_t)M * K);
        void *dx = dup_dev(p, xa, (size_t)M * K * esz(p->dt));
        float *gf = malloc(sizeof(float) * M * N);
        void *dout = p->go->alloc(p->g, (size_t)M * N * 4);
        int32_t got[64];
        CHECK_OK(p->go->matmul(p->g, dx, M, gw, dout, 1, err, sizeof err), err);
        down(p, gf, dout, (size_t)M * N * 4);
        const int rc = p->go->head_greedy(p->g, dx, M, gw, err, sizeof err);
        if (p->dt != PL_BF16) {
            CHECK_MSG(rc == PL_ERR_UNSUPPORTED, "head_greedy in f32: %d", rc);
        } else {
            CHECK_OK(rc, err);
            CHECK_OK(p->go->head_greedy_tokens(p->g, M, got, err, sizeof err), err);
            for (int r = 0; r < M; r++) {
                const int want = pl_argmax(gf + (size_t)r * N, N);
                CHECK_MSG(got[r] == want, "head_greedy [%d,%d]x[%d,%d]^T pass %d row %d: %d, pl_argmax %d", M, K, N, K, pass, r, got[r],
                          want);
                if (si == 7 || (si == 3 && r == 1)) CHECK_MSG(got[r] == 0, "head_greedy shape %d row %d: %d, want 0", si, r, got[r]);
                checked++;
            }
        }
        p->go->free(p->g, dout);
        p->go->free(p->g, dx);
        p->go->weight_free(p->g, gw);
        free(w), free(x), free(xa), free(gf);
    }
    pl_cuda_backend_tune_tile(p->g, 0, 0, 0);
    pl_cuda_backend_tile_copy(p->g, 0);
    { /* one row and 65 rows: not the tile kernel's, nothing launched; tokens without a head */
        enum { N = 300, K = 64 };
        float *w = rand_act(PL_F32, (size_t)N * K, 1.0f);
        void *gw = make_weight(p, 1, w, N, K, 1, 1);
        void *dx = p->go->alloc(p->g, (size_t)65 * K * esz(p->dt));
        int32_t t[65];
        CHECK(p->go->head_greedy(p->g, dx, 1, gw, err, sizeof err) == PL_ERR_UNSUPPORTED);
        CHECK(p->go->head_greedy(p->g, dx, 65, gw, err, sizeof err) == PL_ERR_UNSUPPORTED);
        CHECK_ERR(p->go->head_greedy_tokens(p->g, 4, t, err, sizeof err), PL_ERR_INTERNAL, "without a greedy head", err);
        p->go->free(p->g, dx);
        p->go->weight_free(p->g, gw);
        free(w);
    }
    if (p->dt == PL_BF16) printf("  greedy head: %d rows equal to pl_argmax of the f32 logits\n", checked);
}

static void test_errors(pair *p) {
    pl_cuda_backend *b = NULL;
    CHECK_ERR(pl_cuda_backend_create(7, 0, &b, err, sizeof err), PL_ERR_INVALID, "act", err);
    CHECK_ERR(pl_cuda_backend_create(PL_BF16, 4096, &b, err, sizeof err), PL_ERR_INVALID, "device", err);
    size_t live = pl_cuda_backend_live_bytes(p->g);
    /* out of memory: a real one and an injected one; nothing leaks */
    void *huge = p->go->alloc(p->g, (size_t)1 << 52);
    CHECK(huge == NULL);
    CHECK_MSG(strstr(pl_cuda_backend_last_error(p->g), "out of device memory") != NULL, "%s", pl_cuda_backend_last_error(p->g));
    float w[64 * 8];
    for (int i = 0; i < 64 * 8; i++) w[i] = runif();
    pl_weight_src src = {PL_SRC_F32, 64, 8, w, NULL, 0, 0, 0};
    const pl_weight_src *parts[1] = {&src};
    void *out = NULL;
    pl_cuda_backend_inject_alloc_failure(p->g, 1);
    CHECK_ERR(p->go->weight_create(p->g, parts, 1, 1, &out, err, sizeof err), PL_ERR_NOMEM, "out of device memory", err);
    CHECK(pl_cuda_backend_live_bytes(p->g) == live);
    CHECK_OK(pl_cuda_backend_sync(p->g, err, sizeof err), err);
    /* budget helper */
    int pages = 0;
    CHECK_OK(pl_cuda_kv_budget_pages(1 << 20, 100, 0, 0, &pages, err, sizeof err), err);
    CHECK(pages == 100);
    CHECK_OK(pl_cuda_kv_budget_pages(1 << 20, 0, 0.5, 1024, &pages, err, sizeof err), err);
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    CHECK_MSG(pages >= 1 && (size_t)pages <= fr / (1 << 20), "fraction budget %d pages, %zu MiB free", pages, fr >> 20);
    printf("  budget: half of free memory less 1 GiB = %d pages of 1 MiB (%zu MiB free)\n", pages, fr >> 20);
    CHECK_ERR(pl_cuda_kv_budget_pages((size_t)1 << 40, 100, 0, 0, &pages, err, sizeof err), PL_ERR_NOMEM, "holds no page", err);
    CHECK_ERR(pl_cuda_kv_budget_pages(1 << 20, 0, 1.5, 0, &pages, err, sizeof err), PL_ERR_INVALID, "fraction", err);
    CHECK_ERR(pl_cuda_kv_budget_pages(0, 1, 0, 0, &pages, err, sizeof err), PL_ERR_INVALID, "page_bytes", err);
}

int main(void) {
    if (pl_cuda_device_check(err, sizeof err) != PL_OK) {
        if (no_gpu_checks("CUDA device")) return 1;
        printf("SKIP: %s\n", err);
        return 77;
    }
    CHECK(pack_checks() == 0);
    pl_dtype dts[2] = {PL_BF16, PL_F32};
    for (int i = 0; i < 2; i++) {
        pair p;
        memset(&p, 0, sizeof p);
        p.dt = dts[i];
        p.cpu.act = dts[i];
        p.cpu.threads = 2;
        p.co = pl_cpu_backend_ops();
        p.go = pl_cuda_backend_ops();
        CHECK_OK(pl_cuda_backend_create(dts[i], 0, &p.g, err, sizeof err), err);
        if (!p.g) TEST_END();
        p.st = (cudaStream_t)pl_cuda_backend_stream(p.g);
        printf("%s\n", dts[i] == PL_BF16 ? "bf16" : "f32");
        test_matmul(&p);
        test_head_greedy(&p);
        test_elementwise(&p);
        test_kv_attention(&p, 128);
        test_kv_attention(&p, 64);
        test_rope_append(&p, 128);
        test_rope_append(&p, 64);
        if (i == 0) test_rope_attention(&p);
        if (i == 0) {
            test_matmul_norm(&p);
            test_tile_fixup(&p);
            test_mlp_fused(&p);
            test_wide_proj(&p);
            test_fullk_proj(&p);
            test_tile_alone(&p);
            test_tile_pre_all(&p);
            test_attention_gemm(&p);
            test_sampler(&p);
            test_errors(&p);
        }
        CHECK_MSG(pl_cuda_backend_live_bytes(p.g) == 0, "%zu device bytes leaked", pl_cuda_backend_live_bytes(p.g));
        CHECK_OK(pl_cuda_backend_sync(p.g, err, sizeof err), err);
        pl_cuda_backend_destroy(p.g);
    }
    TEST_END();
}
#endif
