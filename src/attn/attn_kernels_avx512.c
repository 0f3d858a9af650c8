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

const pl_attn_kernels pl_attn_kernels_avx512 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32, NULL, NULL, NULL};
const pl_attn_kernels pl_attn_kernels_avx512_bf16 = {qk_dot, qk_kt, softmax, pv, bf16_to_f32, qk_bf16, pv_bf16, qk_kt_bf16};
