/* Stand-alone benchmark of decode-sized bf16 GEMMs y[M, N] = x[M, K] W[N, K]^T (f32
 * accumulation, y bf16, the LM head's y f32) on the Qwen3-4B projection shapes: the backend's
 * cublasGemmEx(OP_T, OP_N, ..., CUBLAS_GEMM_DEFAULT) call against pl_cuda_lt_gemm (cuBLASLt,
 * the fastest heuristic candidate, tuned once per shape), with the device-to-device copy
 * ceiling measured in the same run (pl_cuda_measure_copy_gbps, 2 GiB, read + write counted).
 *
 * Every time is the median of --reps runs, each between its own pair of CUDA events, all
 * enqueued behind a host gate before the GPU starts them (so launch overhead is not timed); the
 * weights rotate over enough copies that one rotation is > 256 MiB, so the 60 MB L2 never
 * holds them (as in a decode step, where 8 GB of weights stream by). GB/s counts the weight
 * bytes alone (N * K * 2 per GEMM). Every case is also checked: the tuned result against the
 * default one (max abs diff / max |default| must be <= 1e-2) and both against a float64 CPU
 * dot product at sampled entries (same bound); any failure makes the exit status 1.
 *
 * An experiment, not used by the backend (PERF.md: tuning gained 0-11% per shape, and keys of
 * exact row counts would tune again for every batch size a server passes through).
 * Build (after a CMake build in build-gpu with PAGELLM_CUDA=ON):
 *   nvcc -O2 -std=c++17 -Isrc -Iinclude -Ibench/cuda -c bench/cuda/gemm_lt.cu -o build-gpu/gemm_lt.o
 *   gcc -O2 -std=c11 -Wall -Wextra -Werror -fopenmp -Iinclude -Isrc -Ibench/cuda -I/usr/local/cuda/include \
 *       bench/cuda/bench_gemm.c build-gpu/gemm_lt.o build-gpu/libpagellm.a -L/usr/local/cuda/lib64 -lcudart_static \
 *       -lcublas -lcublasLt -lcjson -lpcre2-8 -lutf8proc -lstdc++ -lm -ldl -lpthread -lrt -o build-gpu/bench_gemm
 * usage: bench_gemm [--ms 16,32,64,128,256] [--reps 20] [--shapes qkv,o,gate_up,down,lm_head]
 *                   [--workspace-mib 32] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bf16.h"
#include "base/json.h"
#include "base/timing.h"
#include "bench_cuda.h"
#include "gemm_lt.h"
#include "pagellm/cuda.h"

#define BK(x)                                                                                                         \
    do {                                                                                                              \
        cublasStatus_t s_ = (x);                                                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                            \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d (%s)\n", __FILE__, __LINE__, #x, (int)s_, cublasGetStatusString(s_)); \
            exit(1);                                                                                                  \
        }                                                                                                             \
    } while (0)

typedef struct shape {
    const char *name;
    int n, k, y_f32;
} shape;

/* Qwen3-4B: hidden 2560, 32 q heads + 8 kv heads of 128, intermediate 9728, vocab 151936 */
static const shape k_shapes[] = {
    {"qkv", 6144, 2560, 0}, {"o", 2560, 4096, 0}, {"gate_up", 19456, 2560, 0}, {"down", 2560, 9728, 0}, {"lm_head", 151936, 2560, 1},
};
#define NSHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))
#define MAX_MS 16
#define ROTATION_MIN_BYTES ((size_t)256 << 20)
#define REL_TOL 1e-2
#define SPOT_SAMPLES 64

/* Host gate: a host function on the stream that holds the GPU until every timed run is
 * enqueued, so launch overhead never shows up between a pair of events (gives up after 10 s). */
static atomic_int g_gate;
static void gate_wait(void *arg) {
    (void)arg;
    const double t0 = pl_now_seconds();
    while (!atomic_load(&g_gate) && pl_now_seconds() - t0 < 10.0) {
    }
}

/* Deterministic values in [-1, 1), by index (so OpenMP threads need no shared state). */
static float rand_unit(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)((double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

static void fill_bf16(uint16_t *p, size_t n, uint64_t seed) {
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)n; i++) p[i] = pl_f32_to_bf16(rand_unit(seed, (uint64_t)i));
}

/* The backend's call (src/cuda/backend_cuda.cu op_matmul): column-major y^T[N, M] = W^T x^T. */
static cublasStatus_t gemm_default(cublasHandle_t h, const void *w, const void *x, int m, int n, int k, void *y, int y_f32) {
    const float alpha = 1.f, beta = 0.f;
    return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w, CUDA_R_16BF, k, x, CUDA_R_16BF, k, &beta, y,
                        y_f32 ? CUDA_R_32F : CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static float y_at(const void *y, size_t i, int y_f32) {
    return y_f32 ? ((const float *)y)[i] : pl_bf16_to_f32(((const uint16_t *)y)[i]);
}

typedef struct row {
    int m;
    const shape *sh;
    int copies;
    double def_us, tuned_us, max_abs, rel, spot_def, spot_tuned;
    pl_cuda_lt_report rep;
    int pass;
} row;

static void usage(void) {
    fprintf(stderr, "usage: bench_gemm [--ms 16,32,64,128,256] [--reps 20] [--shapes qkv,o,gate_up,down,lm_head]\n"
                    "                  [--workspace-mib 32] [--json FILE]\n");
}

int main(int argc, char **argv) {
    int ms[MAX_MS] = {16, 32, 64, 128, 256}, nms = 5, reps = 20, ws_mib = 32;
    int use_shape[NSHAPES];
    for (int s = 0; s < NSHAPES; s++) use_shape[s] = 1;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workspace-mib") && i + 1 < argc) ws_mib = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc) {
            nms = 0;
            for (char *t = strtok(argv[++i], ","); t && nms < MAX_MS; t = strtok(NULL, ",")) ms[nms++] = atoi(t);
        } else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) {
            for (int s = 0; s < NSHAPES; s++) use_shape[s] = 0;
            for (char *t = strtok(argv[++i], ","); t; t = strtok(NULL, ",")) {
                int found = 0;
                for (int s = 0; s < NSHAPES; s++)
                    if (!strcmp(t, k_shapes[s].name)) use_shape[s] = found = 1;
                if (!found) {
                    fprintf(stderr, "bench_gemm: unknown shape '%s'\n", t);
                    return 2;
                }
            }
        } else {
            fprintf(stderr, "bench_gemm: unknown or incomplete flag '%s'\n", argv[i]);
            usage();
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || nms < 1 || ws_mib < 1 || ws_mib > 4096) {
        fprintf(stderr, "bench_gemm: --reps must be in [1, 1000], --workspace-mib in [1, 4096], --ms non-empty\n");
        return 2;
    }
    int maxm = 0;
    for (int i = 0; i < nms; i++) {
        if (ms[i] < 1 || ms[i] > 65536) {
            fprintf(stderr, "bench_gemm: M %d outside [1, 65536]\n", ms[i]);
            return 2;
        }
        maxm = ms[i] > maxm ? ms[i] : maxm;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        fprintf(stderr, "bench_gemm: no CUDA device\n");
        return 1;
    }
    char err[512], devname[256];
    const double copy_gbps = pl_cuda_measure_copy_gbps(0, 0, devname, sizeof devname, err, sizeof err);
    if (copy_gbps <= 0) {
        fprintf(stderr, "bench_gemm: copy ceiling: %s\n", err);
        return 1;
    }
    printf("device: %s; copy ceiling %.0f GB/s (cudaMemcpyAsync 2 GiB, read + write counted)\n", devname, copy_gbps);
    printf("GB/s = weight bytes (N*K*2) / median time of %d runs; weights rotated over > 256 MiB of copies\n", reps);

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cublasHandle_t blas;
    BK(cublasCreate(&blas));
    BK(cublasSetStream(blas, st));
    pl_cuda_lt *lt = NULL;
    if (pl_cuda_lt_create(&lt, (size_t)ws_mib << 20, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 1;
    }
    cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)reps);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (!ev || !t) {
        fprintf(stderr, "bench_gemm: out of host memory\n");
        return 1;
    }
    for (int i = 0; i < 2 * reps; i++) CK(cudaEventCreate(&ev[i]));

    /* host operands: the largest W and x, generated once (shapes use prefixes) */
    size_t max_wel = 0, max_k = 0, max_yel = 0;
    for (int s = 0; s < NSHAPES; s++) {
        if (!use_shape[s]) continue;
        const size_t wel = (size_t)k_shapes[s].n * k_shapes[s].k;
        max_wel = wel > max_wel ? wel : max_wel;
        max_k = (size_t)k_shapes[s].k > max_k ? (size_t)k_shapes[s].k : max_k;
        const size_t yel = (size_t)maxm * k_shapes[s].n;
        max_yel = yel > max_yel ? yel : max_yel;
    }
    uint16_t *hw = malloc(2 * max_wel), *hx = malloc(2 * (size_t)maxm * max_k);
    void *hy_ref = malloc(4 * max_yel), *hy_t = malloc(4 * max_yel);
    row *rows = calloc((size_t)NSHAPES * nms, sizeof *rows);
    if (!hw || !hx || !hy_ref || !hy_t || !rows) {
        fprintf(stderr, "bench_gemm: out of host memory (%zu bytes of weights)\n", 2 * max_wel);
        return 1;
    }
    fill_bf16(hw, max_wel, 1);
    fill_bf16(hx, (size_t)maxm * max_k, 2);

    printf("\n%5s %-8s %7s %6s %11s %9s %11s %9s %8s %7s %11s %9s  %s\n", "M", "shape", "N", "K", "default us", "GB/s", "tuned us",
           "GB/s", "speedup", "x copy", "max|diff|", "rel err", "choice");
    int nrows = 0, all_pass = 1;
    for (int s = 0; s < NSHAPES; s++) {
        if (!use_shape[s]) continue;
        const shape *sh = &k_shapes[s];
        const int n = sh->n, k = sh->k, yf = sh->y_f32;
        const size_t wbytes = (size_t)n * k * 2, wstride = (wbytes + 255) / 256 * 256;
        int copies = (int)((ROTATION_MIN_BYTES + wbytes - 1) / wbytes) + 1;
        if (copies < 2) copies = 2;
        char *dw = NULL;
        void *dx = NULL, *dy_ref = NULL, *dy_t = NULL;
        const size_t es = yf ? 4 : 2, ybytes = (size_t)maxm * n * es;
        CK(cudaMalloc((void **)&dw, wstride * (size_t)copies));
        CK(cudaMalloc(&dx, 2 * (size_t)maxm * k));
        CK(cudaMalloc(&dy_ref, ybytes));
        CK(cudaMalloc(&dy_t, ybytes));
        CK(cudaMemcpy(dw, hw, wbytes, cudaMemcpyHostToDevice));
        for (int c = 1; c < copies; c++) CK(cudaMemcpy(dw + (size_t)c * wstride, dw, wbytes, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(dx, hx, 2 * (size_t)maxm * k, cudaMemcpyHostToDevice));

        for (int mi = 0; mi < nms; mi++) {
            const int m = ms[mi];
            row *r = &rows[nrows++];
            r->m = m, r->sh = sh, r->copies = copies;
            /* reference and tuned results on copy 0 (the first tuned call tunes) */
            CK(cudaMemsetAsync(dy_ref, 0xff, ybytes, st));
            CK(cudaMemsetAsync(dy_t, 0xff, ybytes, st)); /* NaN patterns: an unwritten entry fails the check */
            BK(gemm_default(blas, dw, dx, m, n, k, dy_ref, yf));
            if (pl_cuda_lt_gemm(lt, dw, dx, m, n, k, dy_t, yf, 1, st, err, sizeof err)) {
                fprintf(stderr, "bench_gemm: M %d %s: %s\n", m, sh->name, err);
                return 1;
            }
            CK(cudaStreamSynchronize(st));
            if (!pl_cuda_lt_report_get(lt, m, n, k, yf, &r->rep)) {
                fprintf(stderr, "bench_gemm: M %d %s: not cached after a tuning call\n", m, sh->name);
                return 1;
            }
            const size_t yel = (size_t)m * n;
            CK(cudaMemcpy(hy_ref, dy_ref, yel * es, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hy_t, dy_t, yel * es, cudaMemcpyDeviceToHost));
            double max_abs = 0, max_ref = 0;
            int nonfinite = 0;
            for (size_t i = 0; i < yel; i++) {
                const double a = y_at(hy_ref, i, yf), b = y_at(hy_t, i, yf);
                if (!isfinite(a) || !isfinite(b)) {
                    nonfinite++;
                    continue;
                }
                max_abs = fabs(a - b) > max_abs ? fabs(a - b) : max_abs;
                max_ref = fabs(a) > max_ref ? fabs(a) : max_ref;
            }
            r->max_abs = max_abs;
            r->rel = nonfinite ? INFINITY : max_abs / (max_ref > 0 ? max_ref : 1.0);
            /* float64 dot products at sampled (row, col): checks the layout of both paths */
            double spot_d = 0, spot_t = 0;
            for (int q = 0; q < SPOT_SAMPLES; q++) {
                const int i = q == 0 ? 0 : q == 1 ? m - 1 : (int)((rand_unit(7, (uint64_t)q) * 0.5 + 0.5) * m) % m;
                const int j = q == 0 ? 0 : q == 1 ? n - 1 : (int)((rand_unit(8, (uint64_t)q) * 0.5 + 0.5) * n) % n;
                double dot = 0;
                for (int c = 0; c < k; c++)
                    dot += (double)pl_bf16_to_f32(hx[(size_t)i * k + c]) * (double)pl_bf16_to_f32(hw[(size_t)j * k + c]);
                const size_t at = (size_t)i * n + j;
                const double dd = fabs(y_at(hy_ref, at, yf) - dot), dt = fabs(y_at(hy_t, at, yf) - dot);
                spot_d = !(dd <= spot_d) ? dd : spot_d; /* NaN propagates */
                spot_t = !(dt <= spot_t) ? dt : spot_t;
            }
            const double scale = max_ref > 0 ? max_ref : 1.0;
            r->spot_def = spot_d / scale, r->spot_tuned = spot_t / scale;
            r->pass = r->rel <= REL_TOL && r->spot_def <= REL_TOL && r->spot_tuned <= REL_TOL;
            all_pass &= r->pass;

            /* timing: warm-up, then reps runs each between its own events, weights rotated */
            for (int path = 0; path < 2; path++) {
                atomic_store(&g_gate, 0);
                CK(cudaLaunchHostFunc(st, gate_wait, NULL));
                for (int i = -3; i < reps; i++) {
                    const char *w = dw + (size_t)((i + 3) % copies) * wstride;
                    if (i >= 0) CK(cudaEventRecord(ev[2 * i], st));
                    if (path == 0) BK(gemm_default(blas, w, dx, m, n, k, dy_ref, yf));
                    else if (pl_cuda_lt_gemm(lt, w, dx, m, n, k, dy_t, yf, 0, st, err, sizeof err)) {
                        fprintf(stderr, "bench_gemm: M %d %s: %s\n", m, sh->name, err);
                        return 1;
                    }
                    if (i >= 0) CK(cudaEventRecord(ev[2 * i + 1], st));
                }
                atomic_store(&g_gate, 1);
                CK(cudaStreamSynchronize(st));
                for (int i = 0; i < reps; i++) {
                    float ms_ = 0;
                    CK(cudaEventElapsedTime(&ms_, ev[2 * i], ev[2 * i + 1]));
                    t[i] = (double)ms_ * 1e3;
                }
                (path == 0 ? &r->def_us : &r->tuned_us)[0] = pl_median(t, reps);
            }
            char choice[160];
            if (r->rep.use_default)
                snprintf(choice, sizeof choice, "default (best Lt %.1f us, default %.1f us at tuning)", r->rep.best_lt_us, r->rep.default_us);
            else
                snprintf(choice, sizeof choice, "Lt algo %d tile %d splitK %d stages %d ws %zu (default %.1f us at tuning)%s",
                         r->rep.algo_id, r->rep.tile_id, r->rep.splitk_num, r->rep.stages_id, r->rep.workspace_bytes, r->rep.default_us,
                         r->rep.cold_l2 ? "" : " [warm-L2 tuning]");
            const double gd = wbytes / (r->def_us * 1e-6) / 1e9, gt = wbytes / (r->tuned_us * 1e-6) / 1e9;
            printf("%5d %-8s %7d %6d %11.1f %9.0f %11.1f %9.0f %8.2f %7.2f %11.3g %9.2e  %s%s\n", m, sh->name, n, k, r->def_us, gd,
                   r->tuned_us, gt, r->def_us / r->tuned_us, gt / copy_gbps, r->max_abs, r->rel, choice, r->pass ? "" : "  FAIL");
            if (!r->pass)
                fprintf(stderr, "bench_gemm: M %d %s: tuned vs default rel %.3g, vs float64 spot check: default %.3g, tuned %.3g (bound %g)\n",
                        m, sh->name, r->rel, r->spot_def, r->spot_tuned, REL_TOL);
            fflush(stdout);
        }
        CK(cudaFree(dw));
        CK(cudaFree(dx));
        CK(cudaFree(dy_ref));
        CK(cudaFree(dy_t));
    }

    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            fprintf(stderr, "bench_gemm: cannot write %s\n", json);
            return 1;
        }
        pl_json_writer jw;
        pl_json_init(&jw, f, 1);
        pl_json_begin_object(&jw);
        pl_json_key(&jw, "device"), pl_json_string(&jw, devname);
        pl_json_key(&jw, "copy_gbps"), pl_json_double(&jw, copy_gbps);
        pl_json_key(&jw, "reps"), pl_json_int(&jw, reps);
        pl_json_key(&jw, "workspace_bytes"), pl_json_int(&jw, (int64_t)ws_mib << 20);
        pl_json_key(&jw, "pass"), pl_json_bool(&jw, all_pass);
        pl_json_key(&jw, "rows");
        pl_json_begin_array(&jw);
        for (int i = 0; i < nrows; i++) {
            const row *r = &rows[i];
            const double wb = (double)r->sh->n * r->sh->k * 2;
            pl_json_begin_object(&jw);
            pl_json_key(&jw, "m"), pl_json_int(&jw, r->m);
            pl_json_key(&jw, "shape"), pl_json_string(&jw, r->sh->name);
            pl_json_key(&jw, "n"), pl_json_int(&jw, r->sh->n);
            pl_json_key(&jw, "k"), pl_json_int(&jw, r->sh->k);
            pl_json_key(&jw, "y_f32"), pl_json_bool(&jw, r->sh->y_f32);
            pl_json_key(&jw, "weight_bytes"), pl_json_double(&jw, wb);
            pl_json_key(&jw, "weight_copies"), pl_json_int(&jw, r->copies);
            pl_json_key(&jw, "default_us"), pl_json_double(&jw, r->def_us);
            pl_json_key(&jw, "default_gbps"), pl_json_double(&jw, wb / (r->def_us * 1e-6) / 1e9);
            pl_json_key(&jw, "tuned_us"), pl_json_double(&jw, r->tuned_us);
            pl_json_key(&jw, "tuned_gbps"), pl_json_double(&jw, wb / (r->tuned_us * 1e-6) / 1e9);
            pl_json_key(&jw, "speedup"), pl_json_double(&jw, r->def_us / r->tuned_us);
            pl_json_key(&jw, "max_abs_diff"), pl_json_double(&jw, r->max_abs);
            pl_json_key(&jw, "rel_err"), pl_json_double(&jw, r->rel);
            pl_json_key(&jw, "spot_rel_err_default"), pl_json_double(&jw, r->spot_def);
            pl_json_key(&jw, "spot_rel_err_tuned"), pl_json_double(&jw, r->spot_tuned);
            pl_json_key(&jw, "pass"), pl_json_bool(&jw, r->pass);
            pl_json_key(&jw, "choice");
            pl_json_begin_object(&jw);
            pl_json_key(&jw, "use_default"), pl_json_bool(&jw, r->rep.use_default);
            pl_json_key(&jw, "candidates"), pl_json_int(&jw, r->rep.candidates);
            pl_json_key(&jw, "timed"), pl_json_int(&jw, r->rep.timed);
            pl_json_key(&jw, "cold_l2"), pl_json_bool(&jw, r->rep.cold_l2);
            pl_json_key(&jw, "tune_chosen_us"), pl_json_double(&jw, r->rep.chosen_us);
            pl_json_key(&jw, "tune_default_us"), pl_json_double(&jw, r->rep.default_us);
            pl_json_key(&jw, "tune_best_lt_us"), pl_json_double(&jw, r->rep.best_lt_us);
            pl_json_key(&jw, "tune_heuristic_us"), pl_json_double(&jw, r->rep.heuristic_us);
            pl_json_key(&jw, "workspace_bytes"), pl_json_int(&jw, (int64_t)r->rep.workspace_bytes);
            pl_json_key(&jw, "algo_id"), pl_json_int(&jw, r->rep.algo_id);
            pl_json_key(&jw, "tile_id"), pl_json_int(&jw, r->rep.tile_id);
            pl_json_key(&jw, "splitk_num"), pl_json_int(&jw, r->rep.splitk_num);
            pl_json_key(&jw, "reduction_scheme"), pl_json_int(&jw, r->rep.reduction_scheme);
            pl_json_key(&jw, "stages_id"), pl_json_int(&jw, r->rep.stages_id);
            pl_json_key(&jw, "swizzle"), pl_json_int(&jw, r->rep.swizzle);
            pl_json_key(&jw, "custom_option"), pl_json_int(&jw, r->rep.custom_option);
            pl_json_key(&jw, "cluster_shape_id"), pl_json_int(&jw, r->rep.cluster_shape_id);
            pl_json_end_object(&jw);
            pl_json_end_object(&jw);
        }
        pl_json_end_array(&jw);
        pl_json_end_object(&jw);
        fputc('\n', f);
        if (fclose(f) != 0) {
            fprintf(stderr, "bench_gemm: error writing %s\n", json);
            return 1;
        }
    }
    for (int i = 0; i < 2 * reps; i++) cudaEventDestroy(ev[i]);
    pl_cuda_lt_destroy(lt);
    cublasDestroy(blas);
    cudaStreamDestroy(st);
    free(ev), free(t), free(hw), free(hx), free(hy_ref), free(hy_t), free(rows);
    printf("\n%s: tuned vs default within %g (relative to max |y|) in every case\n", all_pass ? "PASS" : "FAIL", REL_TOL);
    return all_pass ? 0 : 1;
}
