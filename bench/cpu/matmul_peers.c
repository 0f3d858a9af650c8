/* Standalone experiment: pagellm's bf16 matmul (the CPU backend's `matmul` op) against the
 * Debian-packaged peers on the Qwen3 projection shapes, in one process, with the machine's
 * ceilings measured in the same run. y[M, N] = x[M, K] W[N, K]^T.
 *   - OpenBLAS cblas_sgemm: f32 (Debian's build has no bf16 GEMM), weights twice the bytes;
 *   - oneDNN matmul: bf16 x bf16 -> bf16 with f32 accumulation, weights reordered once into
 *     oneDNN's preferred blocked layout (as pagellm repacks its weights at load).
 * Build and run: bench/cpu/matmul_peers.sh (installs libopenblas-dev and libdnnl-dev when
 * missing; neither is a dependency of pagellm). Prints one line per shape. */
#include <cblas.h>
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bf16.h"
#include "base/ceiling.h"
#include "base/rng.h"
#include "base/timing.h"
#include "model/model_internal.h"

#define DNNL_OK(x)                                                   \
    do {                                                             \
        dnnl_status_t s_ = (x);                                      \
        if (s_ != dnnl_success) {                                    \
            fprintf(stderr, "oneDNN: %s failed (%d)\n", #x, (int)s_); \
            exit(1);                                                 \
        }                                                            \
    } while (0)

typedef struct timing {
    double best, med;
} timing;

static double run_best(double *t, int n, double *med) {
    double b = t[0];
    for (int i = 1; i < n; i++)
        if (t[i] < b) b = t[i];
    *med = pl_median(t, n);
    return b;
}

int main(int argc, char **argv) {
    int T = argc > 1 ? atoi(argv[1]) : 1, iters = argc > 2 ? atoi(argv[2]) : 7;
    openblas_set_num_threads(T);
    /* qwen3-0.6b projections: qkv, o, gate_up, down, lm_head; decode (M = 1) and prefill (M = 512). */
    const int shapes[][2] = {{4096, 1024}, {1024, 2048}, {6144, 1024}, {1024, 3072}, {151936, 1024}};
    const int ms[] = {1, 512};
    pl_ceilings c;
    pl_measure_ceilings(T, 1.0, &c);
    printf("threads %d | ceilings: read %.1f GB/s, f32 FMA %.1f GFLOP/s, bf16 dot %.1f GFLOP/s | pagellm kernel %s\n", T,
           c.read_gbps, c.fma_f32_gflops, c.bf16_dot_gflops, pl_cpu_matmul_kernel_name());
    printf("%6s %7s %6s | %22s | %22s | %22s\n", "M", "N", "K", "pagellm bf16", "oneDNN bf16", "OpenBLAS sgemm f32");
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    DNNL_OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    DNNL_OK(dnnl_stream_create(&stream, eng, dnnl_stream_default_flags));
    pl_mt19937 rng;
    pl_mt_seed(&rng, 1);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            const int N = shapes[si][0], K = shapes[si][1], M = ms[mi];
            if (N > 100000 && M > 1) continue; /* the LM head only runs on last rows */
            size_t nw = (size_t)N * K, nx = (size_t)M * K, ny = (size_t)M * N;
            uint16_t *wb = malloc(2 * nw), *xb = malloc(2 * nx), *yb = malloc(2 * ny), *yd = malloc(2 * ny);
            float *wf = malloc(4 * nw), *xf = malloc(4 * nx), *yf = malloc(4 * ny);
            for (size_t i = 0; i < nw; i++) wb[i] = pl_f32_to_bf16((float)(0.02 * pl_mt_normal(&rng))), wf[i] = pl_bf16_to_f32(wb[i]);
            for (size_t i = 0; i < nx; i++) xb[i] = pl_f32_to_bf16((float)pl_mt_normal(&rng)), xf[i] = pl_bf16_to_f32(xb[i]);
            /* pagellm */
            pl_cpu_backend be = {PL_BF16, T, 0};
            const pl_backend_ops *ops = pl_cpu_backend_ops();
            pl_weight_src src = {PL_SRC_BF16, N, K, wb, NULL, 0, 0, 0};
            const pl_weight_src *parts[1] = {&src};
            void *w;
            char err[256];
            if (ops->weight_create(&be, parts, 1, 1, &w, err, sizeof err)) {
                fprintf(stderr, "%s\n", err);
                return 1;
            }
            /* oneDNN: weights logical [K, N] from our [N, K] rows (tag ba), reordered to "any" */
            dnnl_memory_desc_t a_md, b_md, b_any, c_md;
            dnnl_dims_t ad = {M, K}, bd = {K, N}, cd = {M, N};
            DNNL_OK(dnnl_memory_desc_init_by_tag(&a_md, 2, ad, dnnl_bf16, dnnl_ab));
            DNNL_OK(dnnl_memory_desc_init_by_tag(&b_md, 2, bd, dnnl_bf16, dnnl_ba));
            DNNL_OK(dnnl_memory_desc_init_by_tag(&b_any, 2, bd, dnnl_bf16, dnnl_format_tag_any));
            DNNL_OK(dnnl_memory_desc_init_by_tag(&c_md, 2, cd, dnnl_bf16, dnnl_ab));
            dnnl_matmul_desc_t mmd;
            DNNL_OK(dnnl_matmul_desc_init(&mmd, &a_md, &b_any, NULL, &c_md));
            dnnl_primitive_desc_t pd;
            DNNL_OK(dnnl_primitive_desc_create(&pd, &mmd, NULL, eng, NULL));
            const dnnl_memory_desc_t *b_pref = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
            dnnl_primitive_t prim;
            DNNL_OK(dnnl_primitive_create(&prim, pd));
            dnnl_memory_t A, Bplain, B, C;
            DNNL_OK(dnnl_memory_create(&A, &a_md, eng, xb));
            DNNL_OK(dnnl_memory_create(&Bplain, &b_md, eng, wb));
            DNNL_OK(dnnl_memory_create(&B, b_pref, eng, DNNL_MEMORY_ALLOCATE));
            DNNL_OK(dnnl_memory_create(&C, &c_md, eng, yd));
            dnnl_primitive_desc_t rpd;
            DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &b_md, eng, b_pref, eng, NULL));
            dnnl_primitive_t reorder;
            DNNL_OK(dnnl_primitive_create(&reorder, rpd));
            dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, Bplain}, {DNNL_ARG_TO, B}};
            DNNL_OK(dnnl_primitive_execute(reorder, stream, 2, rargs));
            DNNL_OK(dnnl_stream_wait(stream));
            dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, A}, {DNNL_ARG_WEIGHTS, B}, {DNNL_ARG_DST, C}};

            double tp[64], td[64], tb[64];
            for (int it = 0; it < iters + 1; it++) {
                double t0 = pl_now_seconds();
                ops->matmul(&be, xb, M, w, yb, 0, err, sizeof err);
                double t1 = pl_now_seconds();
                DNNL_OK(dnnl_primitive_execute(prim, stream, 3, args));
                DNNL_OK(dnnl_stream_wait(stream));
                double t2 = pl_now_seconds();
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, xf, K, wf, K, 0.0f, yf, N);
                double t3 = pl_now_seconds();
                if (it > 0) tp[it - 1] = t1 - t0, td[it - 1] = t2 - t1, tb[it - 1] = t3 - t2; /* first call warms up */
            }
            /* The three agree (bf16 output rounding aside). */
            double md = 0, mr = 0;
            for (size_t i = 0; i < ny; i++) {
                double a = pl_bf16_to_f32(yb[i]), d = pl_bf16_to_f32(yd[i]);
                if (fabs(a - yf[i]) > md) md = fabs(a - yf[i]);
                if (fabs(d - yf[i]) > md) md = fabs(d - yf[i]);
                if (fabs(yf[i]) > mr) mr = fabs(yf[i]);
            }
            double mp, mdn, mb, bp = run_best(tp, iters, &mp), bdn = run_best(td, iters, &mdn), bb = run_best(tb, iters, &mb);
            (void)bp, (void)bdn, (void)bb;
            double fl = 2.0 * M * N * K;
            if (M == 1) /* decode: bandwidth of the weight stream (bf16 bytes; f32 for OpenBLAS) */
                printf("%6d %7d %6d | %7.3f ms %6.1f GB/s | %7.3f ms %6.1f GB/s | %7.3f ms %6.1f GB/s | max|diff|/max %.1e\n", M, N, K,
                       mp * 1e3, 2.0 * nw / mp / 1e9, mdn * 1e3, 2.0 * nw / mdn / 1e9, mb * 1e3, 4.0 * nw / mb / 1e9, md / mr);
            else
                printf("%6d %7d %6d | %7.2f ms %5.0f GF/s | %7.2f ms %5.0f GF/s | %7.2f ms %5.0f GF/s | max|diff|/max %.1e\n", M, N, K,
                       mp * 1e3, fl / mp / 1e9, mdn * 1e3, fl / mdn / 1e9, mb * 1e3, fl / mb / 1e9, md / mr);
            dnnl_primitive_destroy(prim), dnnl_primitive_destroy(reorder);
            dnnl_primitive_desc_destroy(pd), dnnl_primitive_desc_destroy(rpd);
            dnnl_memory_destroy(A), dnnl_memory_destroy(Bplain), dnnl_memory_destroy(B), dnnl_memory_destroy(C);
            ops->weight_free(&be, w);
            free(wb), free(xb), free(yb), free(yd), free(wf), free(xf), free(yf);
        }
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(eng);
    return 0;
}
