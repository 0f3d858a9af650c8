/* AVX2 + FMA micro-kernels (run-time selected; CI machines may lack AVX-512). */
#include <immintrin.h>
#include <math.h>

#include "attn/attn_internal.h"
#include "attn/attn_simd.h"

#define PL_T2 __attribute__((target("avx2,fma")))
#define PL_INL2 static inline __attribute__((always_inline, target("avx2,fma")))

/* out lane k = horizontal sum of v[k] */
PL_INL2 __m256 hsum8(const __m256 *v) {
    __m256 h1 = _mm256_hadd_ps(v[0], v[1]), h2 = _mm256_hadd_ps(v[2], v[3]);
    __m256 h3 = _mm256_hadd_ps(v[4], v[5]), h4 = _mm256_hadd_ps(v[6], v[7]);
    __m256 h5 = _mm256_hadd_ps(h1, h2), h6 = _mm256_hadd_ps(h3, h4);
    return _mm256_add_ps(_mm256_permute2f128_ps(h5, h6, 0x20), _mm256_permute2f128_ps(h5, h6, 0x31));
}

PL_T2 static void qk_dot(const float *q, int ldq, int nrows, const float *const *krows, int nkp, int dp, float *s,
                         int lds) {
    for (int i = 0; i < nrows; i++) {
        const float *q0 = q + (size_t)i * ldq;
        for (int j0 = 0; j0 < nkp; j0 += 8) {
            const float *const *kr = krows + j0;
            __m256 a[8];
            for (int j = 0; j < 8; j++) a[j] = _mm256_setzero_ps();
            for (int d = 0; d < dp; d += 8) {
                __m256 x0 = _mm256_loadu_ps(q0 + d);
                for (int j = 0; j < 8; j++) a[j] = _mm256_fmadd_ps(x0, _mm256_loadu_ps(kr[j] + d), a[j]);
            }
            _mm256_storeu_ps(s + (size_t)i * lds + j0, hsum8(a));
        }
    }
}

#define PL_QK_KT2(R)                                                                          \
    do {                                                                                      \
        __m256 acc[R][2];                                                                     \
        for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();              \
        for (int d = 0; d < dp; d++) {                                                        \
            __m256 k0 = _mm256_loadu_ps(kt + (size_t)d * PL_ATTN_BK + c0);                    \
            __m256 k1 = _mm256_loadu_ps(kt + (size_t)d * PL_ATTN_BK + c0 + 8);                \
            for (int r = 0; r < R; r++) {                                                     \
                __m256 x = _mm256_broadcast_ss(q + (size_t)(i + r) * ldq + d);                \
                acc[r][0] = _mm256_fmadd_ps(x, k0, acc[r][0]);                                \
                acc[r][1] = _mm256_fmadd_ps(x, k1, acc[r][1]);                                \
            }                                                                                 \
        }                                                                                     \
        for (int r = 0; r < R; r++) {                                                         \
            _mm256_storeu_ps(s + (size_t)(i + r) * lds + c0, acc[r][0]);                      \
            _mm256_storeu_ps(s + (size_t)(i + r) * lds + c0 + 8, acc[r][1]);                  \
        }                                                                                     \
    } while (0)

PL_T2 static void qk_kt(const float *q, int ldq, int nrows, const float *kt, int nkp, int dp, float *s, int lds) {
    for (int c0 = 0; c0 < nkp; c0 += 16) {
        int i = 0;
        for (; i + 6 <= nrows; i += 6) PL_QK_KT2(6);
        for (; i < nrows; i++) PL_QK_KT2(1);
    }
}

PL_INL2 __m256 exp2v(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(-126.0f));
    __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 f = _mm256_sub_ps(x, n);
    __m256 p = _mm256_set1_ps(1.5403530e-4f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.3333558e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.6181291e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.5504109e-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.4022651e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.9314718e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

PL_T2 static void softmax(float *s, int lds, int nrows, int nk, int nkp, int t0, const int *lim, float *m, float *l,
                          float *alpha) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int i = 0; i < nrows; i++) {
        float *si = s + (size_t)i * lds;
        int cnt = lim[i] - t0;
        cnt = cnt < 0 ? 0 : cnt > nk ? nk : cnt;
        if (cnt == 0) {
            for (int j = 0; j < nkp; j += 8) _mm256_storeu_ps(si + j, _mm256_setzero_ps());
            alpha[i] = 1.0f;
            continue;
        }
        __m256 vmax = _mm256_set1_ps(-INFINITY);
        for (int j = 0; j < nkp; j += 8) {
            __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - j), lane));
            vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_loadu_ps(si + j), valid));
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        float bm = _mm_cvtss_f32(h);
        float mn = m[i] > bm ? m[i] : bm;
        float c = m[i] == -INFINITY ? 0.0f : pl_exp2_scalar(m[i] - mn);
        __m256 vm = _mm256_set1_ps(mn), vs = _mm256_setzero_ps();
        for (int j = 0; j < nkp; j += 8) {
            __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - j), lane));
            __m256 p = _mm256_and_ps(valid, exp2v(_mm256_sub_ps(_mm256_loadu_ps(si + j), vm)));
            _mm256_storeu_ps(si + j, p);
            vs = _mm256_add_ps(vs, p);
        }
        __m128 t = _mm_add_ps(_mm256_castps256_ps128(vs), _mm256_extractf128_ps(vs, 1));
        t = _mm_add_ps(t, _mm_movehl_ps(t, t));
        t = _mm_add_ss(t, _mm_shuffle_ps(t, t, 1));
        l[i] = l[i] * c + _mm_cvtss_f32(t);
        m[i] = mn;
        alpha[i] = c;
    }
}

#define PL_PV2(R, ND)                                                                          \
    do {                                                                                       \
        __m256 acc[R][ND];                                                                     \
        for (int r = 0; r < R; r++) {                                                          \
            __m256 c = _mm256_set1_ps(alpha[i + r]);                                           \
            for (int e = 0; e < ND; e++)                                                       \
                acc[r][e] = _mm256_mul_ps(c, _mm256_loadu_ps(o + (size_t)(i + r) * ldo + d0 + 8 * e)); \
        }                                                                                      \
        for (int j = 0; j < nk; j++) {                                                         \
            __m256 vv[ND];                                                                     \
            for (int e = 0; e < ND; e++) vv[e] = _mm256_loadu_ps(vrows[j] + d0 + 8 * e);       \
            for (int r = 0; r < R; r++) {                                                      \
                __m256 x = _mm256_broadcast_ss(p + (size_t)(i + r) * ldp + j);                 \
                for (int e = 0; e < ND; e++) acc[r][e] = _mm256_fmadd_ps(x, vv[e], acc[r][e]); \
            }                                                                                  \
        }                                                                                      \
        for (int r = 0; r < R; r++)                                                            \
            for (int e = 0; e < ND; e++) _mm256_storeu_ps(o + (size_t)(i + r) * ldo + d0 + 8 * e, acc[r][e]); \
    } while (0)

PL_T2 static void pv(const float *p, int ldp, int nrows, const float *const *vrows, int nk, int dp, const float *alpha,
                     float *o, int ldo) {
    for (int d0 = 0; d0 < dp; d0 += 16) {
        int i = 0;
        for (; i + 4 <= nrows; i += 4) PL_PV2(4, 2);
        for (; i < nrows; i++) PL_PV2(1, 2);
    }
}

PL_T2 static void bf16_to_f32(float *dst, const uint16_t *src, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)));
    }
    for (; i < n; i++) dst[i] = pl_bf16_to_f32(src[i]);
}

const pl_attn_kernels pl_attn_kernels_avx2 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32, NULL, NULL, NULL, NULL};
