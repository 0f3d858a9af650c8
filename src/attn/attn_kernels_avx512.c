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

/* ---- bf16 pages in place, head_dim 128 ---- */

#define PL_TBF __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512bf16,fma")))

/* vdpbf16ps: exact bf16 products, f32 sums; Q stays unscaled bf16 (exact) and the scale is
 * applied to the f32 score. Four query rows stay in registers and each K row is loaded once
 * for all four (a GQA group), two keys at a time: 8 accumulators, one 8-way reduction. */
PL_TBF static void qk_bf16(const uint16_t *q, int nrows, const uint16_t *const *krows, int nkp, float qscale, float *s,
                           int lds, const uint16_t *pf, int npf) {
    const __m512 sc = _mm512_set1_ps(qscale);
    for (int i0 = 0; i0 < nrows; i0 += 4) {
        int R = nrows - i0 < 4 ? nrows - i0 : 4;
        __m512bh qv[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                qv[r][c] = (__m512bh)(r < R ? _mm512_loadu_si512(q + (size_t)(i0 + r) * 128 + 32 * c)
                                            : _mm512_setzero_si512());
        for (int j = 0; j < nkp; j += 2) {
            /* prefetches spread between the dot products, a key's lines per key */
            if (i0 == 0)
                for (int jj = j; jj < j + 2 && jj < npf; jj++)
                    for (int c = 0; c < 128; c += 32) _mm_prefetch((const char *)(pf + (size_t)jj * 128 + c), _MM_HINT_T0);
            /* v[c] = (row c, key j), v[4 + c] = (row c, key j + 1) */
            __m512 v[8];
            for (int jj = 0; jj < 2; jj++) {
                const uint16_t *kr = krows[j + jj];
                __m512bh k0 = (__m512bh)_mm512_loadu_si512(kr), k1 = (__m512bh)_mm512_loadu_si512(kr + 32);
                __m512bh k2 = (__m512bh)_mm512_loadu_si512(kr + 64), k3 = (__m512bh)_mm512_loadu_si512(kr + 96);
                for (int r = 0; r < 4; r++) {
                    __m512 t = _mm512_dpbf16_ps(_mm512_setzero_ps(), qv[r][0], k0);
                    t = _mm512_dpbf16_ps(t, qv[r][1], k1);
                    t = _mm512_dpbf16_ps(t, qv[r][2], k2);
                    v[4 * jj + r] = _mm512_dpbf16_ps(t, qv[r][3], k3);
                }
            }
            __m512 t[4], u[2];
            for (int k = 0; k < 4; k++)
                t[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
                                     _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xEE));
            for (int k = 0; k < 2; k++)
                u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0x88),
                                     _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0xDD));
            /* u[k], 128-bit lane c: four partial sums of v[4k + c] */
            __m512 w = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x44), _mm512_shuffle_ps(u[0], u[1], 0xEE));
            __m512 h = _mm512_add_ps(_mm512_shuffle_ps(w, w, 0x88), _mm512_shuffle_ps(w, w, 0xDD));
            /* 128-bit lane c = (sum v[c], sum v[4 + c], ...): row c's two scores, adjacent */
            h = _mm512_mul_ps(h, sc);
            float *sr = s + (size_t)i0 * lds + j;
            _mm_storel_pi((__m64 *)sr, _mm512_castps512_ps128(h));
            if (R > 1) _mm_storel_pi((__m64 *)(sr + lds), _mm512_extractf32x4_ps(h, 1));
            if (R > 2) _mm_storel_pi((__m64 *)(sr + 2 * (size_t)lds), _mm512_extractf32x4_ps(h, 2));
            if (R > 3) _mm_storel_pi((__m64 *)(sr + 3 * (size_t)lds), _mm512_extractf32x4_ps(h, 3));
        }
    }
}

/* P V with vdpbf16ps over key pairs: V rows j, j+1 interleaved by unpacklo/hi_epi16, so
 * accumulator lane 4L+i holds dim 8L+i (lo) or 8L+4+i (hi) of each 32-dim chunk; o is
 * permuted in and out once per call. P is rounded to bf16 (as the seed's MMA kernel does). */
#define PL_PVDP_BLOCK(R)                                                                          \
    do {                                                                                          \
        __m512 lo[R][2], hi[R][2];                                                                \
        for (int r = 0; r < R; r++) {                                                             \
            __m512 c = _mm512_set1_ps(al[i + r]);                                                 \
            const float *orow = ob + (size_t)(i + r) * ldo + d0;                                  \
            for (int ch = 0; ch < 2; ch++) {                                                      \
                __m512 n0 = _mm512_mul_ps(c, _mm512_loadu_ps(orow + 32 * ch));                    \
                __m512 n1 = _mm512_mul_ps(c, _mm512_loadu_ps(orow + 32 * ch + 16));               \
                lo[r][ch] = _mm512_permutex2var_ps(n0, to_lo, n1);                                \
                hi[r][ch] = _mm512_permutex2var_ps(n0, to_hi, n1);                                \
            }                                                                                     \
        }                                                                                         \
        for (int j = 0; j < nk; j += 2) {                                                         \
            if (i == 0 && d0 == 0)                                                                \
                for (int jj = j; jj < j + 2 && jj < npf; jj++)                                    \
                    for (int c = 0; c < 128; c += 32)                                             \
                        _mm_prefetch((const char *)(pf + (size_t)jj * 128 + c), _MM_HINT_T0);     \
            __m512i v0[2], v1[2];                                                                 \
            for (int ch = 0; ch < 2; ch++) {                                                      \
                __m512i va = _mm512_loadu_si512(vrows[j] + d0 + 32 * ch);                         \
                __m512i vb = _mm512_loadu_si512(vrows[j + 1] + d0 + 32 * ch);                     \
                v0[ch] = _mm512_unpacklo_epi16(va, vb);                                           \
                v1[ch] = _mm512_unpackhi_epi16(va, vb);                                           \
            }                                                                                     \
            for (int r = 0; r < R; r++) {                                                         \
                __m512bh pp = (__m512bh)_mm512_set1_epi32(p16[(size_t)(i + r) * 16 + j / 2]);     \
                for (int ch = 0; ch < 2; ch++) {                                                  \
                    lo[r][ch] = _mm512_dpbf16_ps(lo[r][ch], pp, (__m512bh)v0[ch]);                \
                    hi[r][ch] = _mm512_dpbf16_ps(hi[r][ch], pp, (__m512bh)v1[ch]);                \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        for (int r = 0; r < R; r++) {                                                             \
            float *orow = ob + (size_t)(i + r) * ldo + d0;                                        \
            for (int ch = 0; ch < 2; ch++) {                                                      \
                _mm512_storeu_ps(orow + 32 * ch, _mm512_permutex2var_ps(lo[r][ch], from0, hi[r][ch]));      \
                _mm512_storeu_ps(orow + 32 * ch + 16, _mm512_permutex2var_ps(lo[r][ch], from1, hi[r][ch])); \
            }                                                                                     \
        }                                                                                         \
    } while (0)

PL_TBF static void pv_bf16(const float *p, int ldp, int nrows, const uint16_t *const *vrows, int nk,
                           const float *alpha, float *o, int ldo, const uint16_t *pf, int npf) {
    /* natural dims 0..31 of a chunk (n0 = 0..15, n1 = 16..31) <-> lo/hi lanes */
    const __m512i to_lo = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    const __m512i to_hi = _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    const __m512i from0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i from1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    /* probabilities as bf16 pairs: word j/2 of row i = (p[i][j], p[i][j+1]) */
    uint32_t p16[64 * 16];
    for (int i0 = 0; i0 < nrows; i0 += 64) {
        int nr = nrows - i0 < 64 ? nrows - i0 : 64;
        const float *pb = p + (size_t)i0 * ldp;
        for (int r = 0; r < nr; r++) {
            __m512bh h = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(pb + (size_t)r * ldp + 16), _mm512_loadu_ps(pb + (size_t)r * ldp));
            _mm512_storeu_si512(p16 + (size_t)r * 16, (__m512i)h);
        }
        const float *al = alpha + i0;
        float *ob = o + (size_t)i0 * ldo;
        for (int d0 = 0; d0 < 128; d0 += 64) {
            int i = 0;
            for (; i + 4 <= nr; i += 4) PL_PVDP_BLOCK(4);
            for (; i < nr; i++) PL_PVDP_BLOCK(1);
        }
    }
}

/* R rows x 32 keys of S: Q words broadcast against transposed K word rows. */
#define PL_QKKT16_BLOCK(R)                                                                      \
    do {                                                                                        \
        __m512 acc[R][2];                                                                       \
        for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();                \
        for (int wd = 0; wd < 64; wd++) {                                                       \
            __m512bh k0 = (__m512bh)_mm512_loadu_si512(kt + wd * PL_ATTN_BK);                   \
            __m512bh k1 = (__m512bh)_mm512_loadu_si512(kt + wd * PL_ATTN_BK + 16);              \
            for (int r = 0; r < R; r++) {                                                       \
                __m512bh x = (__m512bh)_mm512_set1_epi32((int)q32[(size_t)(i + r) * 64 + wd]);  \
                acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, k0);                                 \
                acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, k1);                                 \
            }                                                                                   \
        }                                                                                       \
        for (int r = 0; r < R; r++) {                                                           \
            _mm512_storeu_ps(s + (size_t)(i + r) * lds, _mm512_mul_ps(acc[r][0], sc));          \
            _mm512_storeu_ps(s + (size_t)(i + r) * lds + 16, _mm512_mul_ps(acc[r][1], sc));     \
        }                                                                                       \
    } while (0)

PL_TBF static void qk_kt_bf16(const uint16_t *q, int nrows, const uint32_t *kt, int nkp, float qscale, float *s,
                              int lds) {
    (void)nkp; /* always computes 32 columns; kt columns past nkp are zero rows */
    const __m512 sc = _mm512_set1_ps(qscale);
    const uint32_t *q32 = (const uint32_t *)q;
    int i = 0;
    for (; i + 6 <= nrows; i += 6) PL_QKKT16_BLOCK(6);
    for (; i < nrows; i++) PL_QKKT16_BLOCK(1);
}

/* ---- fused bf16 decode: the whole sweep of one (row, context range, KV heads) ---- */

/* keys per block (never crossing a page); 64 measured faster than 128 or 32 at B=4 ctx 8192
 * on one dev-VM thread (5.5-5.8 ms vs 5.7-7.0 and 6.2-8.0 ms, alternating runs) */
#define PL_DEC_BK 64

/* Levels 1-3 of the hsum16 tree on v[0..7]: one vector of eight 2-lane partial sums. */
PL_INL512 __m512 dec_reduce8(const __m512 *v) {
    __m512 t[4], u[2];
    /* level 1 as (a2 a3 b0 b1) + (a0 a1 b2 b3): one shuffle and one blend per pair */
    for (int k = 0; k < 4; k++)
        t[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x4E),
                             _mm512_mask_blend_ps(0xFF00, v[2 * k], v[2 * k + 1]));
    for (int k = 0; k < 2; k++)
        u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0x88),
                             _mm512_shuffle_f32x4(t[2 * k], t[2 * k + 1], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x44), _mm512_shuffle_ps(u[0], u[1], 0xEE));
}

/* v[4 * jj + r] = q[r] . k[jj] (partial per lane) for two keys, four query rows. */
#define PL_DEC_QK2(V, KA, KB)                                                                   \
    do {                                                                                        \
        const uint16_t *kr_[2] = {(KA), (KB)};                                                  \
        for (int jj = 0; jj < 2; jj++) {                                                        \
            __m512bh k0 = (__m512bh)_mm512_loadu_si512(kr_[jj]);                                \
            __m512bh k1 = (__m512bh)_mm512_loadu_si512(kr_[jj] + 32);                           \
            __m512bh k2 = (__m512bh)_mm512_loadu_si512(kr_[jj] + 64);                           \
            __m512bh k3 = (__m512bh)_mm512_loadu_si512(kr_[jj] + 96);                           \
            for (int r = 0; r < 4; r++) {                                                       \
                __m512 t_ = _mm512_dpbf16_ps(_mm512_setzero_ps(), qv[r][0], k0);                \
                t_ = _mm512_dpbf16_ps(t_, qv[r][1], k1);                                        \
                t_ = _mm512_dpbf16_ps(t_, qv[r][2], k2);                                        \
                (V)[4 * jj + r] = _mm512_dpbf16_ps(t_, qv[r][3], k3);                           \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* Keys [k0, k1) of one batch row for KV heads [h0, h0 + nheads), page by page: within a
 * page each head in turn, and within a head its blocks front to back (the heads of a page
 * are contiguous, so K and V are each read as one front-to-back run per page; visiting
 * every head's first block, then every head's second, measured ~10% slower at B=4 ctx 8192
 * on one dev-VM thread), and per block of up to PL_DEC_BK keys, for each group of 4 query
 * rows of the head:
 * (1) Q.K: 4 keys x 4 rows per step, one 16-way reduction tree, scores land as lane
 *     4r + k (row r, key k) of one vector; (2) softmax over the whole block on those
 *     vectors: one max / rescale per block, exp2 polynomial, probabilities packed to bf16
 *     pairs; (3) P.V with vdpbf16ps over key pairs, o kept in the lo/hi lane order of the
 *     interleaved V rows for the whole call (permuted in and out once).
 * Software prefetch runs one phase (a head's Q.K or P.V pass over a block) ahead of the
 * loads: the hardware prefetchers cannot follow the jumps to shuffled page ids, and
 * without it the core waits on DRAM at every head block (measured: 1.5x slower at B=4 ctx
 * 8192 on one thread). Prefetching two phases ahead, every 2nd / 4th / 8th line only, a
 * kick of the next page's first lines, or T1/T2/NTA hints were no better or worse. */
PL_TBF static void decode_bf16(const pl_attn_dec_args *A) {
    const int rph = A->rph, ngr = (rph + 3) / 4, ng = A->nheads * ngr, ps = A->page_size;
    const size_t head_elems = (size_t)ps * 128;
    const __m512i to_lo = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
    const __m512i to_hi = _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    const __m512i from0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i from1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const __m512i kk = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512 sc = _mm512_set1_ps(A->qscale), ninf = _mm512_set1_ps(-INFINITY);
    __attribute__((aligned(64))) float sbuf[PL_DEC_BK / 4][16];   /* scores, lane 4r + k */
    __attribute__((aligned(64))) uint32_t p16[PL_DEC_BK / 4 * 8]; /* bf16 pairs, word 8q + 2r + h */
    __m512 mv[PL_ATTN_DEC_GROUPS], lv[PL_ATTN_DEC_GROUPS];
    __m512i limr;
    /* state in: m, l per group as lane-broadcast vectors, o permuted into ow */
    for (int g = 0; g < ng; g++) {
        const int h = g / ngr, i0 = 4 * (g % ngr);
        const float *st = A->state + (size_t)h * A->state_stride;
        float mt[4], lt[4];
        for (int r = 0; r < 4; r++) {
            int i = i0 + r;
            mt[r] = i < rph ? st[i] : -INFINITY;
            lt[r] = i < rph ? st[rph + i] : 0.0f;
        }
        mv[g] = _mm512_setr_ps(mt[0], mt[0], mt[0], mt[0], mt[1], mt[1], mt[1], mt[1], mt[2], mt[2], mt[2], mt[2], mt[3],
                               mt[3], mt[3], mt[3]);
        lv[g] = _mm512_setr_ps(lt[0], lt[0], lt[0], lt[0], lt[1], lt[1], lt[1], lt[1], lt[2], lt[2], lt[2], lt[2], lt[3],
                               lt[3], lt[3], lt[3]);
        for (int r = 0; r < 4; r++) {
            const float *orow = st + 2 * (size_t)rph + (size_t)(i0 + r) * 128;
            float *dst = A->ow + ((size_t)g * 4 + r) * 128;
            for (int c = 0; c < 4; c++) {
                __m512 n0 = _mm512_setzero_ps(), n1 = n0;
                if (i0 + r < rph) n0 = _mm512_loadu_ps(orow + 32 * c), n1 = _mm512_loadu_ps(orow + 32 * c + 16);
                _mm512_store_ps(dst + 32 * c, _mm512_permutex2var_ps(n0, to_lo, n1));
                _mm512_store_ps(dst + 32 * c + 16, _mm512_permutex2var_ps(n0, to_hi, n1));
            }
        }
    }

    for (int t0 = A->k0; t0 < A->k1;) {
        /* one page span: every head's keys [in, in + span) of the page, head by head */
        const int lp = t0 / ps, in0 = t0 - lp * ps, span = ps - in0 < A->k1 - t0 ? ps - in0 : A->k1 - t0;
        const size_t off = (size_t)A->bt[lp] * A->page_stride + (size_t)A->h0 * head_elems + (size_t)in0 * 128;
        /* where the next span starts (head h0), for the prefetch */
        const uint16_t *knext = NULL;
        int nnext = 0;
        if (t0 + span < A->k1) {
            int t1 = t0 + span, lp1 = t1 / ps, in1 = t1 - lp1 * ps;
            nnext = ps - in1 < PL_DEC_BK ? ps - in1 : PL_DEC_BK;
            if (A->k1 - t1 < nnext) nnext = A->k1 - t1;
            knext = A->kpages + (size_t)A->bt[lp1] * A->page_stride + (size_t)A->h0 * head_elems + (size_t)in1 * 128;
        }
        /* (head, block, row group) flattened: each head's span is read front to back, and
         * the row groups of a head share each block while it is in L1 */
        const int nbs = (span + PL_DEC_BK - 1) / PL_DEC_BK;
        for (int u = 0; u < ng * nbs; u++) {
            const int h = u / (nbs * ngr), s0 = (u / ngr) % nbs * PL_DEC_BK, g = h * ngr + u % ngr;
            const int i0 = 4 * (u % ngr), t = t0 + s0, n = span - s0 < PL_DEC_BK ? span - s0 : PL_DEC_BK;
            const int nq = (n + 3) / 4, np2 = (n + 1) / 2;
            const uint16_t *kb = A->kpages + off + (size_t)h * head_elems + (size_t)s0 * 128;
            const uint16_t *vb = A->vpages + off + (size_t)h * head_elems + (size_t)s0 * 128;
            /* Prefetch, on the first row group of a head: this block's V rows during its Q.K,
             * the next block's K rows (same head, next head, or the next span's first head)
             * during its P.V; every line, spread evenly over the steps, so K and V both
             * stream all the time. */
            const char *pa = NULL, *pb = NULL;
            int la = 0, lb = 0;
            if (i0 == 0) {
                pa = (const char *)vb, la = 4 * n;
                if (s0 + n < span) {
                    pb = (const char *)(kb + (size_t)n * 128);
                    lb = 4 * (span - s0 - n < PL_DEC_BK ? span - s0 - n : PL_DEC_BK);
                } else if (h + 1 < A->nheads) {
                    pb = (const char *)(kb - (size_t)s0 * 128 + head_elems);
                    lb = 4 * (span < PL_DEC_BK ? span : PL_DEC_BK);
                } else if (knext) {
                    pb = (const char *)knext, lb = 4 * nnext;
                }
            }
            const int sta = (la + nq - 1) / nq, stb = (lb + 2 * np2 - 1) / (2 * np2);
            {
                int lt[4];
                for (int r = 0; r < 4; r++) {
                    int c = i0 + r < rph ? A->lim[i0 + r] - t : 0;
                    lt[r] = c < 0 ? 0 : c > n ? n : c;
                }
                limr = _mm512_setr_epi32(lt[0], lt[0], lt[0], lt[0], lt[1], lt[1], lt[1], lt[1], lt[2], lt[2], lt[2], lt[2],
                                         lt[3], lt[3], lt[3], lt[3]);
            }
            /* ---- Q.K ---- */
            const uint16_t *qh = A->q + ((size_t)h * rph + i0) * 128;
            __m512bh qv[4][4];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++)
                    qv[r][c] = (__m512bh)(i0 + r < rph ? _mm512_loadu_si512(qh + (size_t)r * 128 + 32 * c)
                                                       : _mm512_setzero_si512());
            for (int jq = 0; jq < nq; jq++) {
                const int j = 4 * jq;
                for (int e = jq * sta; e < (jq + 1) * sta && e < la; e++) _mm_prefetch(pa + 64 * (size_t)e, _MM_HINT_T0);
                const uint16_t *k0p = kb + (size_t)j * 128;
                const uint16_t *k1p = j + 1 < n ? k0p + 128 : A->zero;
                const uint16_t *k2p = j + 2 < n ? k0p + 256 : A->zero;
                const uint16_t *k3p = j + 3 < n ? k0p + 384 : A->zero;
                __m512 v[8];
                PL_DEC_QK2(v, k0p, k1p);
                __m512 w0 = dec_reduce8(v);
                PL_DEC_QK2(v, k2p, k3p);
                __m512 w1 = dec_reduce8(v);
                __m512 hs = _mm512_add_ps(_mm512_shuffle_ps(w0, w1, 0x88), _mm512_shuffle_ps(w0, w1, 0xDD));
                _mm512_store_ps(sbuf[jq], _mm512_mul_ps(hs, sc));
            }
            /* ---- softmax over the block ---- */
            __m512 mx = ninf;
            for (int jq = 0; jq < nq; jq++) {
                __mmask16 ok = _mm512_cmplt_epi32_mask(_mm512_add_epi32(kk, _mm512_set1_epi32(4 * jq)), limr);
                mx = _mm512_mask_max_ps(mx, ok, mx, _mm512_load_ps(sbuf[jq]));
            }
            mx = _mm512_max_ps(mx, _mm512_permute_ps(mx, 0x4E));
            mx = _mm512_max_ps(mx, _mm512_permute_ps(mx, 0xB1));
            __m512 mnew = _mm512_max_ps(mv[g], mx);
            /* -inf - -inf (nothing visible yet) is NaN: exp2v clamps it to 2^-126, o = l = 0 there */
            __m512 alpha = exp2v(_mm512_sub_ps(mv[g], mnew));
            mv[g] = mnew;
            __m512 sum = _mm512_setzero_ps();
            for (int jq = 0; jq < nq; jq += 2) {
                __m512 pq[2];
                for (int e = 0; e < 2; e++) {
                    int q = jq + e;
                    pq[e] = _mm512_setzero_ps();
                    if (q < nq) {
                        __mmask16 ok = _mm512_cmplt_epi32_mask(_mm512_add_epi32(kk, _mm512_set1_epi32(4 * q)), limr);
                        pq[e] = _mm512_maskz_mov_ps(ok, exp2v(_mm512_sub_ps(_mm512_load_ps(sbuf[q]), mnew)));
                        sum = _mm512_add_ps(sum, pq[e]);
                    }
                }
                _mm512_store_si512(p16 + 8 * jq, (__m512i)_mm512_cvtne2ps_pbh(pq[1], pq[0]));
            }
            sum = _mm512_add_ps(sum, _mm512_permute_ps(sum, 0x4E));
            sum = _mm512_add_ps(sum, _mm512_permute_ps(sum, 0xB1));
            lv[g] = _mm512_fmadd_ps(lv[g], alpha, sum);
            /* ---- P.V, 64 dims (two 32-dim chunks) at a time ---- */
            float *og = A->ow + (size_t)g * 4 * 128;
            for (int hf = 0; hf < 2; hf++) {
                __m512 lo[4][2], hi[4][2];
                for (int r = 0; r < 4; r++) {
                    __m512 c = _mm512_permutexvar_ps(_mm512_set1_epi32(4 * r), alpha);
                    const float *orow = og + (size_t)r * 128 + 64 * hf;
                    for (int ch = 0; ch < 2; ch++) {
                        lo[r][ch] = _mm512_mul_ps(c, _mm512_load_ps(orow + 32 * ch));
                        hi[r][ch] = _mm512_mul_ps(c, _mm512_load_ps(orow + 32 * ch + 16));
                    }
                }
                for (int jp = 0; jp < np2; jp++) {
                    for (int e = (hf * np2 + jp) * stb; e < (hf * np2 + jp + 1) * stb && e < lb; e++)
                        _mm_prefetch(pb + 64 * (size_t)e, _MM_HINT_T0);
                    const uint16_t *va = vb + (size_t)(2 * jp) * 128 + 64 * hf;
                    const uint16_t *vn = 2 * jp + 1 < n ? va + 128 : A->zero;
                    __m512i v0[2], v1[2];
                    for (int ch = 0; ch < 2; ch++) {
                        __m512i x = _mm512_loadu_si512(va + 32 * ch), y = _mm512_loadu_si512(vn + 32 * ch);
                        v0[ch] = _mm512_unpacklo_epi16(x, y);
                        v1[ch] = _mm512_unpackhi_epi16(x, y);
                    }
                    const uint32_t *pw = p16 + 8 * (jp >> 1) + (jp & 1);
                    for (int r = 0; r < 4; r++) {
                        __m512bh pp = (__m512bh)_mm512_set1_epi32((int)pw[2 * r]);
                        for (int ch = 0; ch < 2; ch++) {
                            lo[r][ch] = _mm512_dpbf16_ps(lo[r][ch], pp, (__m512bh)v0[ch]);
                            hi[r][ch] = _mm512_dpbf16_ps(hi[r][ch], pp, (__m512bh)v1[ch]);
                        }
                    }
                }
                for (int r = 0; r < 4; r++) {
                    float *orow = og + (size_t)r * 128 + 64 * hf;
                    for (int ch = 0; ch < 2; ch++) {
                        _mm512_store_ps(orow + 32 * ch, lo[r][ch]);
                        _mm512_store_ps(orow + 32 * ch + 16, hi[r][ch]);
                    }
                }
            }
        }
        t0 += span;
    }

    /* state out */
    for (int g = 0; g < ng; g++) {
        const int h = g / ngr, i0 = 4 * (g % ngr);
        float *st = A->state + (size_t)h * A->state_stride;
        float mt[16], lt[16];
        _mm512_storeu_ps(mt, mv[g]);
        _mm512_storeu_ps(lt, lv[g]);
        for (int r = 0; r < 4 && i0 + r < rph; r++) {
            st[i0 + r] = mt[4 * r], st[rph + i0 + r] = lt[4 * r];
            const float *src = A->ow + ((size_t)g * 4 + r) * 128;
            float *orow = st + 2 * (size_t)rph + (size_t)(i0 + r) * 128;
            for (int c = 0; c < 4; c++) {
                __m512 lo = _mm512_load_ps(src + 32 * c), hi = _mm512_load_ps(src + 32 * c + 16);
                _mm512_storeu_ps(orow + 32 * c, _mm512_permutex2var_ps(lo, from0, hi));
                _mm512_storeu_ps(orow + 32 * c + 16, _mm512_permutex2var_ps(lo, from1, hi));
            }
        }
    }
}

const pl_attn_kernels pl_attn_kernels_avx512 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32, NULL, NULL, NULL, NULL};
const pl_attn_kernels pl_attn_kernels_avx512_bf16 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32, qk_bf16, pv_bf16, qk_kt_bf16,
                                                       decode_bf16};
