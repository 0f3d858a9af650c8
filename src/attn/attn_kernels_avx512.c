/* AVX-512 micro-kernels (selected at run time; compiled with per-function target attributes
 * so the library still runs on CPUs without AVX-512). */
#include <immintrin.h>
#include <math.h>

#include "attn/attn_internal.h"
#include "attn/attn_simd.h"

#define PL_T512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,fma")))
#define PL_INL512 static inline __attribute__((always_inline, target("avx512f,avx512dq,avx512bw,avx512vl,fma")))

/* out lane k = horizontal sum of v[k]: a transpose-add tree, 46 instructions for 16 sums. */
PL_INL512 __m512 hsum16(const __m512 *v) {
    __m512 t[8], u[4], w[2];
    for (int k = 0; k < 8; k++)
        t[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
                             _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xEE));
    for (int k = 0; k < 4; k++)
        u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0x88),
                             _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0xDD));
    for (int k = 0; k < 2; k++)
        w[k] = _mm512_add_ps(_mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0x44),
                             _mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0xEE));
    __m512 r = _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], 0x88), _mm512_shuffle_ps(w[0], w[1], 0xDD));
    /* lane 4c + e holds v[4e + c] */
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, r);
}

PL_T512 static void qk_dot(const float *q, int ldq, int nrows, const float *const *krows, int nkp, int dp, float *s,
                           int lds) {
    int i = 0;
    for (; i + 2 <= nrows; i += 2) {
        /* two query rows x 8 keys: 16 chains, each K load feeds two FMAs */
        const float *q0 = q + (size_t)i * ldq, *q1 = q0 + ldq;
        for (int j0 = 0; j0 < nkp; j0 += 8) {
            const float *const *kr = krows + j0;
            __m512 a[16];
            for (int j = 0; j < 16; j++) a[j] = _mm512_setzero_ps();
            for (int d = 0; d < dp; d += 16) {
                __m512 x0 = _mm512_loadu_ps(q0 + d), x1 = _mm512_loadu_ps(q1 + d);
                for (int j = 0; j < 8; j++) {
                    __m512 kv = _mm512_loadu_ps(kr[j] + d);
                    a[j] = _mm512_fmadd_ps(x0, kv, a[j]);
                    a[8 + j] = _mm512_fmadd_ps(x1, kv, a[8 + j]);
                }
            }
            __m512 r = hsum16(a);
            _mm256_storeu_ps(s + (size_t)i * lds + j0, _mm512_castps512_ps256(r));
            _mm256_storeu_ps(s + (size_t)(i + 1) * lds + j0, _mm512_extractf32x8_ps(r, 1));
        }
    }
    for (; i < nrows; i++) {
        const float *q0 = q + (size_t)i * ldq;
        for (int j0 = 0; j0 < nkp; j0 += 16) {
            const float *const *kr = krows + j0;
            __m512 a[16];
            for (int j = 0; j < 16; j++) a[j] = _mm512_setzero_ps();
            for (int d = 0; d < dp; d += 16) {
                __m512 x0 = _mm512_loadu_ps(q0 + d);
                for (int j = 0; j < 16; j++) a[j] = _mm512_fmadd_ps(x0, _mm512_loadu_ps(kr[j] + d), a[j]);
            }
            _mm512_storeu_ps(s + (size_t)i * lds + j0, hsum16(a));
        }
    }
}

/* R rows x NJ*16 keys of S from transposed K: R*NJ accumulators, Q broadcast from memory. */
#define PL_QK_KT_BLOCK(R, NJ)                                                                \
    do {                                                                                     \
        __m512 acc[R][NJ];                                                                   \
        for (int r = 0; r < R; r++)                                                          \
            for (int c = 0; c < NJ; c++) acc[r][c] = _mm512_setzero_ps();                    \
        for (int d = 0; d < dp; d++) {                                                       \
            __m512 k0 = _mm512_loadu_ps(kt + (size_t)d * PL_ATTN_BK);                        \
            __m512 k1 = NJ > 1 ? _mm512_loadu_ps(kt + (size_t)d * PL_ATTN_BK + 16) : k0;     \
            for (int r = 0; r < R; r++) {                                                    \
                __m512 x = _mm512_set1_ps(q[(size_t)(i + r) * ldq + d]);                     \
                acc[r][0] = _mm512_fmadd_ps(x, k0, acc[r][0]);                               \
                if (NJ > 1) acc[r][NJ - 1] = _mm512_fmadd_ps(x, k1, acc[r][NJ - 1]);         \
            }                                                                                \
        }                                                                                    \
        for (int r = 0; r < R; r++)                                                          \
            for (int c = 0; c < NJ; c++) _mm512_storeu_ps(s + (size_t)(i + r) * lds + 16 * c, acc[r][c]); \
    } while (0)

PL_T512 static void qk_kt(const float *q, int ldq, int nrows, const float *kt, int nkp, int dp, float *s, int lds) {
    int i = 0;
    if (nkp > 16) {
        for (; i + 6 <= nrows; i += 6) PL_QK_KT_BLOCK(6, 2);
        for (; i < nrows; i++) PL_QK_KT_BLOCK(1, 2);
    } else {
        for (; i + 6 <= nrows; i += 6) PL_QK_KT_BLOCK(6, 1);
        for (; i < nrows; i++) PL_QK_KT_BLOCK(1, 1);
    }
}

PL_INL512 __m512 exp2v(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-126.0f));
    __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_sub_ps(x, n);
    __m512 p = _mm512_set1_ps(1.5403530e-4f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3333558e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291e-3f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504109e-2f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022651e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718e-1f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

PL_T512 static void softmax(float *s, int lds, int nrows, int nk, int nkp, int t0, const int *lim, float *m, float *l,
                            float *alpha) {
    for (int i = 0; i < nrows; i++) {
        float *si = s + (size_t)i * lds;
        int cnt = lim[i] - t0;
        cnt = cnt < 0 ? 0 : cnt > nk ? nk : cnt;
        if (cnt == 0) {
            for (int j = 0; j < nkp; j += 16) _mm512_storeu_ps(si + j, _mm512_setzero_ps());
            alpha[i] = 1.0f;
            continue;
        }
        __m512 ninf = _mm512_set1_ps(-INFINITY);
        __m512 vmax = ninf;
        for (int j = 0; j < nkp; j += 16) {
            __mmask16 mk = (__mmask16)(cnt - j >= 16 ? 0xffff : cnt - j <= 0 ? 0 : (1u << (cnt - j)) - 1);
            vmax = _mm512_mask_max_ps(vmax, mk, vmax, _mm512_loadu_ps(si + j));
        }
        float bm = _mm512_reduce_max_ps(vmax);
        float mn = m[i] > bm ? m[i] : bm;
        float c = m[i] == -INFINITY ? 0.0f : pl_exp2_scalar(m[i] - mn);
        __m512 vm = _mm512_set1_ps(mn), vs = _mm512_setzero_ps();
        for (int j = 0; j < nkp; j += 16) {
            __mmask16 mk = (__mmask16)(cnt - j >= 16 ? 0xffff : cnt - j <= 0 ? 0 : (1u << (cnt - j)) - 1);
            __m512 p = _mm512_maskz_mov_ps(mk, exp2v(_mm512_sub_ps(_mm512_loadu_ps(si + j), vm)));
            _mm512_storeu_ps(si + j, p);
            vs = _mm512_add_ps(vs, p);
        }
        l[i] = l[i] * c + _mm512_reduce_add_ps(vs);
        m[i] = mn;
        alpha[i] = c;
    }
}

/* R rows x ND*16 dims of O: o = alpha*o + P V, V rows loaded once per R rows. */
#define PL_PV_BLOCK(R, ND)                                                                     \
    do {                                                                                       \
        __m512 acc[R][ND];                                                                     \
        for (int r = 0; r < R; r++) {                                                          \
            __m512 c = _mm512_set1_ps(alpha[i + r]);                                           \
            for (int e = 0; e < ND; e++)                                                       \
                acc[r][e] = _mm512_mul_ps(c, _mm512_loadu_ps(o + (size_t)(i + r) * ldo + d0 + 16 * e)); \
        }                                                                                      \
        for (int j = 0; j < nk; j++) {                                                         \
            __m512 vv[ND];                                                                     \
            for (int e = 0; e < ND; e++) vv[e] = _mm512_loadu_ps(vrows[j] + d0 + 16 * e);      \
            for (int r = 0; r < R; r++) {                                                      \
                __m512 x = _mm512_set1_ps(p[(size_t)(i + r) * ldp + j]);                       \
                for (int e = 0; e < ND; e++) acc[r][e] = _mm512_fmadd_ps(x, vv[e], acc[r][e]); \
            }                                                                                  \
        }                                                                                      \
        for (int r = 0; r < R; r++)                                                            \
            for (int e = 0; e < ND; e++) _mm512_storeu_ps(o + (size_t)(i + r) * ldo + d0 + 16 * e, acc[r][e]); \
    } while (0)

PL_T512 static void pv(const float *p, int ldp, int nrows, const float *const *vrows, int nk, int dp,
                       const float *alpha, float *o, int ldo) {
    int d0 = 0;
    for (; d0 + 64 <= dp; d0 += 64) {
        int i = 0;
        for (; i + 3 <= nrows; i += 3) PL_PV_BLOCK(3, 4);
        for (; i < nrows; i++) PL_PV_BLOCK(1, 4);
    }
    for (; d0 < dp; d0 += 16) {
        int i = 0;
        for (; i + 6 <= nrows; i += 6) PL_PV_BLOCK(6, 1);
        for (; i < nrows; i++) PL_PV_BLOCK(1, 1);
    }
}

PL_T512 static void bf16_to_f32(float *dst, const uint16_t *src, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i x = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)));
    }
    for (; i < n; i++) dst[i] = pl_bf16_to_f32(src[i]);
}

const pl_attn_kernels pl_attn_kernels_avx512 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32};
