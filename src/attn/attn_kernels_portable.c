/* Portable C micro-kernels: the fallback on CPUs without AVX2, and the readable model of
 * the SIMD ones. */
#include <math.h>

#include "attn/attn_internal.h"
#include "attn/attn_simd.h"

static void qk_dot(const float *q, int ldq, int nrows, const float *const *krows, int nkp, int dp, float *s, int lds) {
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < nkp; j++) {
            const float *qi = q + (size_t)i * ldq, *kj = krows[j];
            float acc[8] = {0};
            for (int d = 0; d < dp; d += 8)
                for (int e = 0; e < 8; e++) acc[e] += qi[d + e] * kj[d + e];
            s[(size_t)i * lds + j] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        }
}

static void qk_kt(const float *q, int ldq, int nrows, const float *kt, int nkp, int dp, float *s, int lds) {
    for (int i = 0; i < nrows; i++) {
        float acc[PL_ATTN_BK] = {0};
        const float *qi = q + (size_t)i * ldq;
        for (int d = 0; d < dp; d++)
            for (int j = 0; j < nkp; j++) acc[j] += qi[d] * kt[(size_t)d * PL_ATTN_BK + j];
        for (int j = 0; j < nkp; j++) s[(size_t)i * lds + j] = acc[j];
    }
}

void pl_attn_softmax_portable(float *s, int lds, int nrows, int nk, int nkp, int t0, const int *lim, float *m,
                              float *l, float *alpha);
void pl_attn_softmax_portable(float *s, int lds, int nrows, int nk, int nkp, int t0, const int *lim, float *m,
                              float *l, float *alpha) {
    for (int i = 0; i < nrows; i++) {
        float *si = s + (size_t)i * lds;
        int cnt = lim[i] - t0;
        cnt = cnt < 0 ? 0 : cnt > nk ? nk : cnt;
        if (cnt == 0) {
            for (int j = 0; j < nkp; j++) si[j] = 0.0f;
            alpha[i] = 1.0f;
            continue;
        }
        float bm = si[0];
        for (int j = 1; j < cnt; j++) bm = si[j] > bm ? si[j] : bm;
        float mn = m[i] > bm ? m[i] : bm;
        float c = m[i] == -INFINITY ? 0.0f : pl_exp2_scalar(m[i] - mn);
        float sum = 0.0f;
        for (int j = 0; j < cnt; j++) {
            si[j] = pl_exp2_scalar(si[j] - mn);
            sum += si[j];
        }
        for (int j = cnt; j < nkp; j++) si[j] = 0.0f;
        l[i] = l[i] * c + sum;
        m[i] = mn;
        alpha[i] = c;
    }
}

static void pv(const float *p, int ldp, int nrows, const float *const *vrows, int nk, int dp, const float *alpha,
               float *o, int ldo) {
    for (int i = 0; i < nrows; i++) {
        float *oi = o + (size_t)i * ldo;
        const float *pi = p + (size_t)i * ldp;
        float c = alpha[i];
        if (c != 1.0f)
            for (int d = 0; d < dp; d++) oi[d] *= c;
        for (int j = 0; j < nk; j++) {
            float pj = pi[j];
            if (pj == 0.0f) continue;
            const float *vj = vrows[j];
            for (int d = 0; d < dp; d++) oi[d] += pj * vj[d];
        }
    }
}

static void bf16_to_f32(float *dst, const uint16_t *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = pl_bf16_to_f32(src[i]);
}

const pl_attn_kernels pl_attn_kernels_portable = {qk_dot, qk_kt, pl_attn_softmax_portable, pv, bf16_to_f32, NULL, NULL, NULL, NULL};

static int cpu_has_bf16(void) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(1));
    return (a >> 5) & 1u;
}

int pl_attn_simd_detect(void) {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return cpu_has_bf16() ? PL_SIMD_AVX512_BF16 : PL_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return PL_SIMD_AVX2;
    return PL_SIMD_PORTABLE;
}

const char *pl_attn_simd_name(int level) {
    switch (level) {
    case PL_SIMD_AVX512_BF16: return "avx512-bf16";
    case PL_SIMD_AVX512: return "avx512";
    case PL_SIMD_AVX2: return "avx2";
    default: return "portable";
    }
}

const pl_attn_kernels *pl_attn_kernels_for(int level) {
    if (level >= PL_SIMD_AVX512_BF16) return &pl_attn_kernels_avx512_bf16;
    if (level == PL_SIMD_AVX512) return &pl_attn_kernels_avx512;
    if (level == PL_SIMD_AVX2) return &pl_attn_kernels_avx2;
    return &pl_attn_kernels_portable;
}
