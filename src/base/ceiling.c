/* Throughput-bound ceiling kernels: 12 independent FMA chains fully unrolled (enough to
 * cover FMA latency x ports on current x86), and a multi-accumulator streaming read. */
#include "base/ceiling.h"

#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/timing.h"
#include "pagellm/status.h"

/* Far beyond a real CCD L3 (32 MiB); sysconf's L3 figure is unreliable under a hypervisor. */
#define PL_CEIL_READ_BYTES ((size_t)512 << 20)

static int have_avx512(void) { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"); }
static int have_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
static int have_bf16(void) {
    /* gcc 12 has no "avx512bf16" name for __builtin_cpu_supports: read CPUID leaf 7 sub 1. */
    if (!have_avx512()) return 0;
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(1));
    return (a >> 5) & 1u;
}

const char *pl_cpu_simd_name(void) {
    if (have_bf16()) return "avx512-bf16";
    if (have_avx512()) return "avx512";
    if (have_avx2()) return "avx2";
    return "portable";
}

/* ---- streaming read ---- */

__attribute__((target("avx512f"))) static float read_avx512(const float *p, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i + 128 <= n; i += 128) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
        a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 64));
        a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 80));
        a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 96));
        a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 112));
    }
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    return _mm512_reduce_add_ps(a0);
}

__attribute__((target("avx2"))) static float read_avx2(const float *p, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
        a4 = _mm256_add_ps(a4, _mm256_load_ps(p + i + 32));
        a5 = _mm256_add_ps(a5, _mm256_load_ps(p + i + 40));
        a6 = _mm256_add_ps(a6, _mm256_load_ps(p + i + 48));
        a7 = _mm256_add_ps(a7, _mm256_load_ps(p + i + 56));
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    float t[8];
    _mm256_storeu_ps(t, a0);
    return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}

static float read_portable(const float *p, size_t n) {
    float a[8] = {0};
    for (size_t i = 0; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) a[j] += p[i + j];
    return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

static float read_slice(const float *p, size_t n, int level) {
    if (level >= 2) return read_avx512(p, n);
    if (level == 1) return read_avx2(p, n);
    return read_portable(p, n);
}

/* ---- FMA ---- */

#define PL_FMA12(OP)                                                                           \
    OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

__attribute__((target("avx512f"))) static float fma_avx512(long iters, float seed) {
    __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(seed), a1 = _mm512_set1_ps(seed + 1), a2 = _mm512_set1_ps(seed + 2),
           a3 = _mm512_set1_ps(seed + 3), a4 = _mm512_set1_ps(seed + 4), a5 = _mm512_set1_ps(seed + 5),
           a6 = _mm512_set1_ps(seed + 6), a7 = _mm512_set1_ps(seed + 7), a8 = _mm512_set1_ps(seed + 8),
           a9 = _mm512_set1_ps(seed + 9), a10 = _mm512_set1_ps(seed + 10), a11 = _mm512_set1_ps(seed + 11);
    for (long i = 0; i < iters; i++) {
#define OP(k) a##k = _mm512_fmadd_ps(a##k, m, c);
        PL_FMA12(OP)
        PL_FMA12(OP)
#undef OP
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long iters, float seed) {
    __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(seed), a1 = _mm256_set1_ps(seed + 1), a2 = _mm256_set1_ps(seed + 2),
           a3 = _mm256_set1_ps(seed + 3), a4 = _mm256_set1_ps(seed + 4), a5 = _mm256_set1_ps(seed + 5),
           a6 = _mm256_set1_ps(seed + 6), a7 = _mm256_set1_ps(seed + 7), a8 = _mm256_set1_ps(seed + 8),
           a9 = _mm256_set1_ps(seed + 9), a10 = _mm256_set1_ps(seed + 10), a11 = _mm256_set1_ps(seed + 11);
    for (long i = 0; i < iters; i++) {
#define OP(k) a##k = _mm256_fmadd_ps(a##k, m, c);
        PL_FMA12(OP)
        PL_FMA12(OP)
#undef OP
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float t[8];
    _mm256_storeu_ps(t, s);
    return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}

static float fma_portable(long iters, float seed) {
    float a[12];
    for (int k = 0; k < 12; k++) a[k] = seed + (float)k;
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < 12; k++) a[k] = a[k] * 0.9999999f + 1e-7f;
    float s = 0;
    for (int k = 0; k < 12; k++) s += a[k];
    return s;
}

/* ---- bf16 dot (vdpbf16ps: 16 lanes x 2 products x 2 flops = 64 flops) ---- */

__attribute__((target("avx512f,avx512bf16"))) static float bf16_avx512(long iters, float seed) {
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80); /* 1.0 */
    __m512bh y = (__m512bh)_mm512_set1_epi16((short)0x3380); /* ~6e-8: keeps sums finite */
    __m512 a0 = _mm512_set1_ps(seed), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0,
           a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    for (long i = 0; i < iters; i++) {
#define OP(k) a##k = _mm512_dpbf16_ps(a##k, x, y);
        PL_FMA12(OP)
        PL_FMA12(OP)
#undef OP
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return _mm512_reduce_add_ps(s);
}

/* kind 0: f32 FMA, 1: bf16 dot. Returns GFLOP/s of one parallel pass of iters per thread. */
static double compute_pass(int kind, int level, int threads, long iters) {
    double flops_per_iter = 24.0 * 2.0 * (kind == 1 ? 32 : (level >= 2 ? 16 : level == 1 ? 8 : 1));
    volatile float sink = 0;
    double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
#pragma omp master
        t0 = pl_now_seconds();
        float seed = (float)omp_get_thread_num() * 0.001f;
        float r;
        if (kind == 1) r = bf16_avx512(iters, seed);
        else if (level >= 2) r = fma_avx512(iters, seed);
        else if (level == 1) r = fma_avx2(iters, seed);
        else r = fma_portable(iters, seed);
#pragma omp barrier
#pragma omp master
        t1 = pl_now_seconds();
#pragma omp atomic
        sink += r;
    }
    (void)sink;
    double dt = t1 - t0;
    return dt > 0 ? flops_per_iter * (double)iters * threads / dt * 1e-9 : 0.0;
}

static double best_compute(int kind, int level, int threads, double budget) {
    long iters = 1 << 16;
    /* calibrate to ~20 ms passes */
    for (;;) {
        double t0 = pl_now_seconds();
        compute_pass(kind, level, threads, iters);
        double dt = pl_now_seconds() - t0;
        if (dt > 0.02 || iters > (1L << 30)) break;
        iters *= 2;
    }
    double best = 0, start = pl_now_seconds();
    for (int rep = 0; rep < 50 && (rep < 3 || pl_now_seconds() - start < budget); rep++) {
        double g = compute_pass(kind, level, threads, iters);
        if (g > best) best = g;
    }
    return best;
}

int pl_measure_ceilings(int threads, double seconds_budget, pl_ceilings *out) {
    if (!out) return PL_ERR_INVALID;
    memset(out, 0, sizeof *out);
    if (threads <= 0) threads = omp_get_max_threads();
    if (seconds_budget <= 0) seconds_budget = 1.5;
    int level = have_avx512() ? 2 : have_avx2() ? 1 : 0;
    out->threads = threads;

    size_t n = PL_CEIL_READ_BYTES / sizeof(float);
    float *buf = aligned_alloc(64, n * sizeof(float));
    if (!buf) return PL_ERR_NOMEM;
    size_t per = (n / (size_t)threads) & ~(size_t)127;
    /* first touch by the reading thread */
#pragma omp parallel num_threads(threads)
    {
        size_t lo = per * (size_t)omp_get_thread_num();
        for (size_t i = lo; i < lo + per; i++) buf[i] = (float)(i & 7) * 0.125f;
    }
    double best_bw = 0, start = pl_now_seconds();
    volatile float sink = 0;
    for (int rep = 0; rep < 40 && (rep < 3 || pl_now_seconds() - start < 0.45 * seconds_budget); rep++) {
        double t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
        {
#pragma omp barrier
#pragma omp master
            t0 = pl_now_seconds();
            float r = read_slice(buf + per * (size_t)omp_get_thread_num(), per, level);
#pragma omp barrier
#pragma omp master
            t1 = pl_now_seconds();
#pragma omp atomic
            sink += r;
        }
        double bw = (double)per * threads * sizeof(float) / (t1 - t0) * 1e-9;
        if (bw > best_bw) best_bw = bw;
    }
    (void)sink;
    free(buf);
    out->read_gbps = best_bw;
    int bf16 = have_bf16();
    out->fma_f32_gflops = best_compute(0, level, threads, (bf16 ? 0.3 : 0.5) * seconds_budget);
    out->bf16_dot_gflops = bf16 ? best_compute(1, 2, threads, 0.25 * seconds_budget) : 0.0;
    return PL_OK;
}
