/* The CPU backend of the forward pass: packed weights and the ops table (embedding, RMSNorm,
 * matmul, q/k norm + RoPE, SwiGLU, residual add). Matmul kernels are picked at run time:
 * AVX-512 with AVX512_BF16 (vdpbf16ps), AVX2 + FMA, or portable C.
 *
 * Weight layout (matrices [N, K], y = x W^T): rows of W (outputs) are grouped by 64 (the
 * last group zero-padded). bf16: group g, k-pair p holds 64 x 2 values, element (n, k) at
 * ((g * K/2 + k/2) * 64 + n%64) * 2 + k%2, so each 64-byte load feeds vdpbf16ps (16 outputs
 * x one k-pair) against a broadcast pair of x. f32: element (n, k) at (g * K + k) * 64 + n%64.
 * A task reads one group as a single linear stream, the best case for a decode step.
 * Vectors (norm weights) are plain float. */
#define PL_GROUP 64
#ifndef PL_PREFETCH
#define PL_PREFETCH 2048 /* elements ahead in the weight stream (4 KiB): measured best of 1-8 KiB */
#endif
#define _DEFAULT_SOURCE /* madvise */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/bf16.h"
#include "model/model_internal.h"

typedef struct cpu_weight {
    int rows, cols, is_matrix;
    pl_dtype dtype;
    int ng;       /* 64-row groups */
    void *data;
    size_t bytes;
} cpu_weight;

static void *aligned_zalloc(size_t bytes) {
    size_t n = (bytes + 63) / 64 * 64;
    if (n == 0) n = 64;
    void *p = aligned_alloc(64, n);
    if (p) memset(p, 0, n);
    return p;
}

/* Weight storage: large buffers on 2 MiB boundaries with transparent huge pages requested
 * (fewer page faults while packing, fewer TLB misses while streaming a decode step). Not
 * zeroed: packing writes every element. */
static void *weight_alloc(size_t bytes) {
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge) return aligned_zalloc(bytes);
    size_t n = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, n);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

float pl_f16_to_f32(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0) {
        if (m == 0) {
            u = s;
        } else { /* subnormal: normalize */
            int sh = 0;
            while (!(m & 0x400)) {
                m <<= 1;
                sh++;
            }
            m &= 0x3ff;
            u = s | ((uint32_t)(113 - sh) << 23) | (m << 13);
        }
    } else if (e == 31) {
        u = s | 0x7f800000u | (m << 13);
    } else {
        u = s | ((e + 112) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t pl_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t s = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00);
    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00); /* overflow to inf */
    if (a < 0x38800000u) {                               /* subnormal or zero */
        float v;
        memcpy(&v, &a, 4);
        return (uint16_t)(s | (uint32_t)lrintf(v * 16777216.0f));
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u;
    return (uint16_t)(s | (r >> 13));
}

void pl_weight_src_row(const pl_weight_src *src, int r, float *out) {
    if (src->gen) {
        src->gen(src, r, out);
        return;
    }
    size_t base = (size_t)r * (size_t)src->cols;
    /* Files need not align tensor data (the header length may be odd): read bytewise. */
    if (src->dtype == PL_SRC_F32) {
        memcpy(out, (const char *)src->data + base * 4, sizeof(float) * (size_t)src->cols);
    } else {
        const unsigned char *p = (const unsigned char *)src->data + base * 2;
        for (int i = 0; i < src->cols; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * (size_t)i, 2);
            out[i] = src->dtype == PL_SRC_BF16 ? pl_bf16_to_f32(h) : pl_f16_to_f32(h);
        }
    }
}

static inline float act_get(pl_dtype dt, const void *p, size_t i) {
    return dt == PL_F32 ? ((const float *)p)[i] : pl_bf16_to_f32(((const uint16_t *)p)[i]);
}
static inline void act_set(pl_dtype dt, void *p, size_t i, float v) {
    if (dt == PL_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = pl_f32_to_bf16(v);
}

/* ---- weights ---- */

static int cpu_weight_create(void *ctx, const pl_weight_src *const *parts, int num_parts, int is_matrix, void **out,
                             char *err, size_t err_len) {
    pl_cpu_backend *b = ctx;
    int rows = 0, cols = parts[0]->cols;
    for (int i = 0; i < num_parts; i++) {
        if (parts[i]->cols != cols)
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "weight_create: part %d has %d cols, want %d", i,
                           parts[i]->cols, cols);
        rows += parts[i]->rows;
    }
    cpu_weight *w = calloc(1, sizeof *w);
    if (!w) return pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create: out of memory");
    w->rows = rows;
    w->cols = cols;
    w->is_matrix = is_matrix;
    if (!is_matrix) {
        w->dtype = PL_F32;
        w->bytes = sizeof(float) * (size_t)rows * (size_t)cols;
        w->data = aligned_zalloc(w->bytes);
        if (!w->data) goto nomem;
        size_t off = 0;
        for (int i = 0; i < num_parts; i++)
            for (int r = 0; r < parts[i]->rows; r++, off += (size_t)cols)
                pl_weight_src_row(parts[i], r, (float *)w->data + off);
        *out = w;
        return PL_OK;
    }
    if (cols % 2)
        return free(w), pl_fail(err, err_len, PL_ERR_INVALID, "weight_create: cols %d must be even", cols);
    w->dtype = b->act;
    w->ng = (rows + PL_GROUP - 1) / PL_GROUP;
    size_t elem = b->act == PL_F32 ? 4 : 2;
    w->bytes = (size_t)w->ng * PL_GROUP * (size_t)cols * elem;
    w->data = weight_alloc(w->bytes);
    if (!w->data) goto nomem;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(b->threads)
    for (int g = 0; g < w->ng; g++) {
        float *tmp = malloc(sizeof(float) * PL_GROUP * (size_t)cols);
        if (!tmp) {
#pragma omp atomic write
            failed = 1;
            continue;
        }
        int n0 = g * PL_GROUP;
        for (int j = 0; j < PL_GROUP; j++) {
            int n = n0 + j, pi = 0;
            if (n >= rows) {
                memset(tmp + (size_t)j * cols, 0, sizeof(float) * (size_t)cols);
                continue;
            }
            while (n >= parts[pi]->rows) n -= parts[pi++]->rows;
            pl_weight_src_row(parts[pi], n, tmp + (size_t)j * cols);
        }
        if (w->dtype == PL_F32) {
            float *d = (float *)w->data + (size_t)g * PL_GROUP * cols;
            for (int k = 0; k < cols; k++)
                for (int j = 0; j < PL_GROUP; j++) d[(size_t)k * PL_GROUP + j] = tmp[(size_t)j * cols + k];
        } else {
            uint16_t *d = (uint16_t *)w->data + (size_t)g * PL_GROUP * cols;
            for (int p = 0; p < cols / 2; p++)
                for (int j = 0; j < PL_GROUP; j++) {
                    d[((size_t)p * PL_GROUP + j) * 2] = pl_f32_to_bf16(tmp[(size_t)j * cols + 2 * p]);
                    d[((size_t)p * PL_GROUP + j) * 2 + 1] = pl_f32_to_bf16(tmp[(size_t)j * cols + 2 * p + 1]);
                }
        }
        free(tmp);
    }
    if (failed) {
        free(w->data);
        goto nomem;
    }
    *out = w;
    return PL_OK;
nomem:
    free(w);
    return pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create: out of memory for [%d, %d]", rows, cols);
}

static void cpu_weight_free(void *ctx, void *p) {
    (void)ctx;
    cpu_weight *w = p;
    if (!w) return;
    free(w->data);
    free(w);
}

static inline float weight_at(const cpu_weight *w, int n, int k) {
    if (!w->is_matrix) return ((const float *)w->data)[(size_t)n * w->cols + k];
    size_t g = (size_t)(n / PL_GROUP), j = (size_t)(n % PL_GROUP);
    if (w->dtype == PL_F32) return ((const float *)w->data)[(g * w->cols + (size_t)k) * PL_GROUP + j];
    size_t idx = ((g * (size_t)(w->cols / 2) + (size_t)(k / 2)) * PL_GROUP + j) * 2 + (size_t)(k & 1);
    return pl_bf16_to_f32(((const uint16_t *)w->data)[idx]);
}

static int cpu_weight_row(void *ctx, const void *p, int r, float *out, char *err, size_t err_len) {
    (void)ctx;
    const cpu_weight *w = p;
    if (r < 0 || r >= w->rows) return pl_fail(err, err_len, PL_ERR_INVALID, "weight_row: row %d outside [0, %d)", r, w->rows);
    for (int k = 0; k < w->cols; k++) out[k] = weight_at(w, r, k);
    return PL_OK;
}

static size_t cpu_weight_bytes(void *ctx, const void *p) {
    (void)ctx;
    const cpu_weight *w = p;
    return w->is_matrix ? (size_t)w->rows * (size_t)w->cols * (w->dtype == PL_F32 ? 4 : 2) : w->bytes;
}

static void *cpu_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    return aligned_zalloc(bytes);
}
static void cpu_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}

static int cpu_level(void);

/* ---- elementwise ops ---- */

static int cpu_embed(void *ctx, const void *p, const int32_t *tokens, int n, void *out, char *err, size_t err_len) {
    pl_cpu_backend *b = ctx;
    const cpu_weight *w = p;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= w->rows)
            return pl_fail(err, err_len, PL_ERR_INVALID, "tokens[%d]: id %d outside [0, %d)", i, tokens[i], w->rows);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < w->cols; k++)
            act_set(b->act, out, (size_t)i * w->cols + k, weight_at(w, tokens[i], k));
    return PL_OK;
}

#define PL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

PL_AVX512 static inline __m512 bf16x16_load(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}

/* n a multiple of 16 */
PL_AVX512 static float sumsq_bf16_512(const uint16_t *x, int n) {
    __m512 a = _mm512_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m512 v = bf16x16_load(x + i);
        a = _mm512_fmadd_ps(v, v, a);
    }
    return _mm512_reduce_add_ps(a);
}

/* out = bf16(x * inv * w), or its float value into f when f != NULL; n a multiple of 16 */
PL_AVX512 static void scale_bf16_512(const uint16_t *x, const float *w, float inv, int n, uint16_t *out, float *f) {
    __m512 s = _mm512_set1_ps(inv);
    for (int i = 0; i < n; i += 16) {
        __m256bh r = _mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_mul_ps(bf16x16_load(x + i), s), _mm512_loadu_ps(w + i)));
        if (f)
            _mm512_storeu_ps(f + i, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)r), 16)));
        else
            _mm256_storeu_si256((__m256i *)(out + i), (__m256i)r);
    }
}

/* half-split rotation of v into bf16 o; half a multiple of 16 */
PL_AVX512 static void rope_store_bf16_512(const float *v, const float *cs, const float *sn, int half, uint16_t *o) {
    for (int i = 0; i < half; i += 16) {
        __m512 x0 = _mm512_loadu_ps(v + i), x1 = _mm512_loadu_ps(v + i + half);
        __m512 c = _mm512_loadu_ps(cs + i), sv = _mm512_loadu_ps(sn + i);
        __m512 y0 = _mm512_fmsub_ps(x0, c, _mm512_mul_ps(x1, sv));
        __m512 y1 = _mm512_fmadd_ps(x1, c, _mm512_mul_ps(x0, sv));
        _mm256_storeu_si256((__m256i *)(o + i), (__m256i)_mm512_cvtneps_pbh(y0));
        _mm256_storeu_si256((__m256i *)(o + i + half), (__m256i)_mm512_cvtneps_pbh(y1));
    }
}

static int cpu_rmsnorm(void *ctx, const void *x, const void *wp, int rows, int dim, float eps, void *out) {
    pl_cpu_backend *b = ctx;
    const float *w = ((const cpu_weight *)wp)->data;
    pl_dtype dt = b->act;
    int fast = dt == PL_BF16 && dim % 16 == 0 && (b->kernel ? b->kernel : cpu_level()) == 3;
#pragma omp parallel for num_threads(b->threads) if (rows > 16)
    for (int r = 0; r < rows; r++) {
        size_t o = (size_t)r * dim;
        if (fast) {
            const uint16_t *xr = (const uint16_t *)x + o;
            float inv = 1.0f / sqrtf(sumsq_bf16_512(xr, dim) / (float)dim + eps);
            scale_bf16_512(xr, w, inv, dim, (uint16_t *)out + o, NULL);
            continue;
        }
        float ss = 0;
        for (int i = 0; i < dim; i++) {
            float v = act_get(dt, x, o + i);
            ss += v * v;
        }
        float inv = 1.0f / sqrtf(ss / (float)dim + eps);
        for (int i = 0; i < dim; i++) act_set(dt, out, o + i, act_get(dt, x, o + i) * inv * w[i]);
    }
    return PL_OK;
}

static int cpu_rope_table(void *ctx, const int32_t *pos, int rows, int hd, double theta, float *cs) {
    pl_cpu_backend *b = ctx;
    int half = hd / 2;
    float invf[512];
    /* Angles as transformers computes them: f32 inverse frequencies times f32 position. */
    for (int i = 0; i < half; i++) invf[i] = 1.0f / powf((float)theta, (float)(2 * i) / (float)hd);
#pragma omp parallel for num_threads(b->threads) if (rows > 8)
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < half; i++) {
            float ang = (float)pos[r] * invf[i];
            cs[(size_t)r * hd + i] = cosf(ang);
            cs[(size_t)r * hd + half + i] = sinf(ang);
        }
    return PL_OK;
}

static int cpu_qk_norm_rope(void *ctx, void *qkv, int rows, size_t row_stride, int nq, int nkv, int hd,
                            const void *qn, const void *kn, float eps, const float *cst, void *q_out) {
    pl_cpu_backend *b = ctx;
    pl_dtype dt = b->act;
    const float *wq = ((const cpu_weight *)qn)->data, *wk = ((const cpu_weight *)kn)->data;
    int half = hd / 2;
    int fast = dt == PL_BF16 && hd % 32 == 0 && (b->kernel ? b->kernel : cpu_level()) == 3;
#pragma omp parallel for num_threads(b->threads) if (rows > 8)
    for (int r = 0; r < rows; r++) {
        float v[1024];
        const float *cs = cst + (size_t)r * hd, *sn = cs + half;
        for (int h = 0; h < nq + nkv; h++) {
            const float *w = h < nq ? wq : wk;
            size_t o = (size_t)r * row_stride + (size_t)h * hd;
            void *dst = qkv; /* where the head goes: in place, or q_out for q heads */
            size_t od = o;
            if (q_out && h < nq) dst = q_out, od = ((size_t)r * nq + (size_t)h) * hd;
            if (fast) {
                uint16_t *hp = (uint16_t *)qkv + o;
                float inv = 1.0f / sqrtf(sumsq_bf16_512(hp, hd) / (float)hd + eps);
                scale_bf16_512(hp, w, inv, hd, NULL, v);
                rope_store_bf16_512(v, cs, sn, half, (uint16_t *)dst + od);
                continue;
            }
            float ss = 0;
            for (int i = 0; i < hd; i++) {
                v[i] = act_get(dt, qkv, o + i);
                ss += v[i] * v[i];
            }
            float inv = 1.0f / sqrtf(ss / (float)hd + eps);
            for (int i = 0; i < hd; i++) {
                v[i] = v[i] * inv * w[i];
                if (dt == PL_BF16) v[i] = pl_bf16_round(v[i]);
            }
            for (int i = 0; i < half; i++) {
                float x0 = v[i], x1 = v[i + half];
                act_set(dt, dst, od + i, x0 * cs[i] - x1 * sn[i]);
                act_set(dt, dst, od + i + half, x1 * cs[i] + x0 * sn[i]);
            }
        }
    }
    return PL_OK;
}

/* exp(x) for x <= 0 on 16 lanes: 2^n * p(f), p a degree-6 Taylor polynomial of 2^f on
 * [-0.5, 0.5] (relative error ~2e-7, far below bf16 rounding). */
PL_AVX512 static inline __m512 exp_neg_512(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f));
    __m512 n = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_mul_ps(_mm512_sub_ps(t, n), _mm512_set1_ps(0.69314718055994531f));
    __m512 p = _mm512_set1_ps(1.0f / 720);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}


/* silu(g) * u on bf16 rows; silu rounded to bf16 as the scalar path does. */
PL_AVX512 static void swiglu_row_bf16_512(const uint16_t *g, const uint16_t *u, uint16_t *o, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 gv = bf16x16_load(g + i), uv = bf16x16_load(u + i);
        /* silu(g) = g / (1 + exp(-g)), with exp of -|g| for range: g >= 0 uses exp(-g) directly,
         * g < 0 uses e = exp(g): silu = g * e / (1 + e). */
        __m512 e = exp_neg_512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(gv)));
        __mmask16 neg = _mm512_cmp_ps_mask(gv, _mm512_setzero_ps(), _CMP_LT_OQ);
        __m512 num = _mm512_mask_mul_ps(gv, neg, gv, e);
        __m512 sv = _mm512_div_ps(num, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
        __m512 sr = _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(sv)), 16));
        _mm256_storeu_si256((__m256i *)(o + i), (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(sr, uv)));
    }
    for (; i < n; i++) {
        float gg = pl_bf16_to_f32(g[i]);
        float sv = pl_bf16_round(gg / (1.0f + expf(-gg)));
        o[i] = pl_f32_to_bf16(sv * pl_bf16_to_f32(u[i]));
    }
}

static int cpu_swiglu(void *ctx, const void *gu, int rows, int inter, void *out) {
    pl_cpu_backend *b = ctx;
    pl_dtype dt = b->act;
    int fast = dt == PL_BF16 && (b->kernel ? b->kernel : cpu_level()) == 3;
#pragma omp parallel for num_threads(b->threads) if (rows > 8)
    for (int r = 0; r < rows; r++) {
        size_t gi = (size_t)r * 2 * inter, oi = (size_t)r * inter;
        if (fast) {
            swiglu_row_bf16_512((const uint16_t *)gu + gi, (const uint16_t *)gu + gi + inter, (uint16_t *)out + oi,
                                inter);
            continue;
        }
        for (int i = 0; i < inter; i++) {
            float g = act_get(dt, gu, gi + i), u = act_get(dt, gu, gi + inter + i);
            float s = g / (1.0f + expf(-g));
            if (dt == PL_BF16) s = pl_bf16_round(s);
            act_set(dt, out, oi + i, s * u);
        }
    }
    return PL_OK;
}

PL_AVX512 static void add_bf16_512(uint16_t *h, const uint16_t *x, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(h + i),
                            (__m256i)_mm512_cvtneps_pbh(_mm512_add_ps(bf16x16_load(h + i), bf16x16_load(x + i))));
    for (; i < n; i++) h[i] = pl_f32_to_bf16(pl_bf16_to_f32(h[i]) + pl_bf16_to_f32(x[i]));
}

static int cpu_add(void *ctx, void *h, const void *x, size_t n) {
    pl_cpu_backend *b = ctx;
    pl_dtype dt = b->act;
    if (dt == PL_BF16 && (b->kernel ? b->kernel : cpu_level()) == 3) {
        add_bf16_512(h, x, n);
        return PL_OK;
    }
    long long nn = (long long)n;
#pragma omp parallel for num_threads(b->threads) if (nn > 65536)
    for (long long i = 0; i < nn; i++) act_set(dt, h, (size_t)i, act_get(dt, h, (size_t)i) + act_get(dt, x, (size_t)i));
    return PL_OK;
}

static int cpu_copy_rows(void *ctx, void *dst, size_t dst_stride, const void *src, size_t src_stride, int rows,
                         int width) {
    pl_cpu_backend *b = ctx;
    size_t e = b->act == PL_F32 ? 4 : 2;
    for (int r = 0; r < rows; r++)
        memcpy((char *)dst + (size_t)r * dst_stride * e, (const char *)src + (size_t)r * src_stride * e,
               (size_t)width * e);
    return PL_OK;
}

/* ---- matmul kernels ----
 * One task: one group of 64 outputs over a tile of up to PL_MR rows of x. */
#define PL_MR 6

typedef struct mm_args {
    const void *x;
    int M, K;
    const cpu_weight *w;
    void *out;
    int out_f32;
    int N;
} mm_args;

static inline void store_row(const mm_args *a, int m, int n0, const float *v, int cnt) {
    if (a->out_f32 || a->w->dtype == PL_F32) {
        memcpy((float *)a->out + (size_t)m * a->N + n0, v, sizeof(float) * (size_t)cnt);
    } else {
        uint16_t *o = (uint16_t *)a->out + (size_t)m * a->N + n0;
        for (int i = 0; i < cnt; i++) o[i] = pl_f32_to_bf16(v[i]);
    }
}

/* Portable kernel, also compiled for AVX2 + FMA (the vectorizer does the rest). */
static inline __attribute__((always_inline)) void mm_tile_portable(const mm_args *a, int g, int m0, int mr) {
    const cpu_weight *w = a->w;
    int K = a->K;
    float acc[PL_MR][PL_GROUP];
    memset(acc, 0, sizeof acc);
    if (w->dtype == PL_F32) {
        const float *B = (const float *)w->data + (size_t)g * PL_GROUP * K;
        const float *X = (const float *)a->x;
        for (int k = 0; k < K; k++) {
            const float *bk = B + (size_t)k * PL_GROUP;
            for (int r = 0; r < mr; r++) {
                float xv = X[(size_t)(m0 + r) * K + k];
                for (int j = 0; j < PL_GROUP; j++) acc[r][j] += xv * bk[j];
            }
        }
    } else {
        const uint16_t *B = (const uint16_t *)w->data + (size_t)g * PL_GROUP * K;
        const uint16_t *X = (const uint16_t *)a->x;
        for (int p = 0; p < K / 2; p++) {
            float b0[PL_GROUP], b1[PL_GROUP];
            for (int j = 0; j < PL_GROUP; j++) {
                uint32_t u;
                memcpy(&u, B + ((size_t)p * PL_GROUP + j) * 2, 4);
                uint32_t lo = u << 16, hi = u & 0xffff0000u;
                memcpy(&b0[j], &lo, 4);
                memcpy(&b1[j], &hi, 4);
            }
            for (int r = 0; r < mr; r++) {
                float x0 = pl_bf16_to_f32(X[(size_t)(m0 + r) * K + 2 * p]);
                float x1 = pl_bf16_to_f32(X[(size_t)(m0 + r) * K + 2 * p + 1]);
                for (int j = 0; j < PL_GROUP; j++) acc[r][j] += x0 * b0[j] + x1 * b1[j];
            }
        }
    }
    int n0 = g * PL_GROUP, cnt = a->N - n0 < PL_GROUP ? a->N - n0 : PL_GROUP;
    for (int r = 0; r < mr; r++) store_row(a, m0 + r, n0, acc[r], cnt);
}

static void mm_task_portable(const mm_args *a, int g, int m0, int mr) { mm_tile_portable(a, g, m0, mr); }

__attribute__((target("avx2,fma"))) static void mm_task_avx2(const mm_args *a, int g, int m0, int mr) {
    mm_tile_portable(a, g, m0, mr);
}

/* AVX-512: MR rows x 4 vectors of 16 accumulators, unrolled by constant propagation. */

static inline __attribute__((always_inline)) PL_AVX512 void mm_kernel_512(const mm_args *a, int g, int m0,
                                                                          const int MR) {
    const cpu_weight *w = a->w;
    int K = a->K;
    __m512 acc[PL_MR][4];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < 4; j++) acc[r][j] = _mm512_setzero_ps();
    if (w->dtype == PL_BF16) {
        const uint16_t *B = (const uint16_t *)w->data + (size_t)g * PL_GROUP * K;
        const uint16_t *X = (const uint16_t *)a->x + (size_t)m0 * K;
        int kp = K / 2;
        for (int p = 0; p < kp; p++) {
            const uint16_t *bp = B + (size_t)p * 128;
            _mm_prefetch((const char *)(bp + PL_PREFETCH), _MM_HINT_T0);
            _mm_prefetch((const char *)(bp + PL_PREFETCH + 64), _MM_HINT_T0);
            __m512bh b[4];
            for (int j = 0; j < 4; j++) b[j] = (__m512bh)_mm512_loadu_si512((const void *)(bp + 32 * j));
            for (int r = 0; r < MR; r++) {
                int32_t pair;
                memcpy(&pair, X + (size_t)r * K + 2 * p, 4);
                __m512bh xv = (__m512bh)_mm512_set1_epi32(pair);
                for (int j = 0; j < 4; j++) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], xv, b[j]);
            }
        }
    } else {
        const float *B = (const float *)w->data + (size_t)g * PL_GROUP * K;
        const float *X = (const float *)a->x + (size_t)m0 * K;
        for (int k = 0; k < K; k++) {
            const float *bk = B + (size_t)k * PL_GROUP;
            __m512 b[4];
            for (int j = 0; j < 4; j++) b[j] = _mm512_loadu_ps(bk + 16 * j);
            for (int r = 0; r < MR; r++) {
                __m512 xv = _mm512_set1_ps(X[(size_t)r * K + k]);
                for (int j = 0; j < 4; j++) acc[r][j] = _mm512_fmadd_ps(xv, b[j], acc[r][j]);
            }
        }
    }
    for (int j = 0; j < 4; j++) {
        int n0 = g * PL_GROUP + 16 * j, cnt = a->N - n0;
        if (cnt <= 0) break;
        if (cnt > 16) cnt = 16;
        __mmask16 mask = (__mmask16)((1u << cnt) - 1u);
        for (int r = 0; r < MR; r++) {
            size_t o = (size_t)(m0 + r) * a->N + n0;
            if (a->out_f32 || w->dtype == PL_F32)
                _mm512_mask_storeu_ps((float *)a->out + o, mask, acc[r][j]);
            else
                _mm256_mask_storeu_epi16((uint16_t *)a->out + o, mask, (__m256i)_mm512_cvtneps_pbh(acc[r][j]));
        }
    }
}

/* Decode (one or two rows): two groups at once, i.e. two weight streams in flight per
 * thread. Each output keeps the accumulation order of mm_kernel_512, so a row's result does
 * not depend on the batch it runs in. */
static inline __attribute__((always_inline)) PL_AVX512 void mm_kernel_512_2g(const mm_args *a, int g, const int MR) {
    const cpu_weight *w = a->w;
    int K = a->K, kp = K / 2;
    __m512 acc[2][2][4];
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < MR; r++)
            for (int j = 0; j < 4; j++) acc[s][r][j] = _mm512_setzero_ps();
    const uint16_t *B0 = (const uint16_t *)w->data + (size_t)g * PL_GROUP * K, *B1 = B0 + (size_t)PL_GROUP * K;
    const uint16_t *X = (const uint16_t *)a->x;
    for (int p = 0; p < kp; p++) {
        __m512bh xv[2];
        for (int r = 0; r < MR; r++) {
            int32_t pair;
            memcpy(&pair, X + (size_t)r * K + 2 * p, 4);
            xv[r] = (__m512bh)_mm512_set1_epi32(pair);
        }
        for (int s = 0; s < 2; s++) {
            const uint16_t *bp = (s ? B1 : B0) + (size_t)p * 128;
            _mm_prefetch((const char *)(bp + PL_PREFETCH), _MM_HINT_T0);
            _mm_prefetch((const char *)(bp + PL_PREFETCH + 64), _MM_HINT_T0);
            for (int j = 0; j < 4; j++) {
                __m512bh b = (__m512bh)_mm512_loadu_si512((const void *)(bp + 32 * j));
                for (int r = 0; r < MR; r++) acc[s][r][j] = _mm512_dpbf16_ps(acc[s][r][j], xv[r], b);
            }
        }
    }
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 4; j++) {
            int n0 = (g + s) * PL_GROUP + 16 * j, cnt = a->N - n0;
            if (cnt <= 0) break;
            if (cnt > 16) cnt = 16;
            __mmask16 mask = (__mmask16)((1u << cnt) - 1u);
            for (int r = 0; r < MR; r++) {
                size_t o = (size_t)r * a->N + n0;
                if (a->out_f32)
                    _mm512_mask_storeu_ps((float *)a->out + o, mask, acc[s][r][j]);
                else
                    _mm256_mask_storeu_epi16((uint16_t *)a->out + o, mask, (__m256i)_mm512_cvtneps_pbh(acc[s][r][j]));
            }
        }
}

PL_AVX512 static void mm_task_avx512_2g(const mm_args *a, int g, int mr) {
    if (mr == 1)
        mm_kernel_512_2g(a, g, 1);
    else
        mm_kernel_512_2g(a, g, 2);
}

PL_AVX512 static void mm_task_avx512(const mm_args *a, int g, int m0, int mr) {
    switch (mr) {
    case 1: mm_kernel_512(a, g, m0, 1); break;
    case 2: mm_kernel_512(a, g, m0, 2); break;
    case 3: mm_kernel_512(a, g, m0, 3); break;
    case 4: mm_kernel_512(a, g, m0, 4); break;
    case 5: mm_kernel_512(a, g, m0, 5); break;
    default: mm_kernel_512(a, g, m0, 6); break;
    }
}

static int cpu_level(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bf16"))
        return 3;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 2;
    return 1;
}

const char *pl_cpu_matmul_kernel_name(void) {
    int l = cpu_level();
    return l == 3 ? "avx512-bf16" : l == 2 ? "avx2" : "portable";
}

void pl_cpu_backend_force_kernel(pl_cpu_backend *b, int level) {
    int max = cpu_level();
    b->kernel = level <= 0 || level > max ? 0 : level;
}

static int cpu_matmul(void *ctx, const void *x, int rows, const void *wp, void *out, int out_f32, char *err,
                      size_t err_len) {
    pl_cpu_backend *b = ctx;
    const cpu_weight *w = wp;
    if (!w->is_matrix) return pl_fail(err, err_len, PL_ERR_INTERNAL, "matmul: weight is not a matrix");
    if (rows <= 0) return PL_OK;
    mm_args a = {x, rows, w->cols, w, out, out_f32, w->rows};
    int level = b->kernel ? b->kernel : cpu_level();
    if (level == 3 && w->dtype == PL_BF16 && rows <= 2 && w->ng >= 2) {
        int pairs = w->ng / 2;
#pragma omp parallel for schedule(dynamic, 1) num_threads(b->threads) if (pairs > 1)
        for (int t = 0; t < pairs + (w->ng & 1); t++) {
            if (t < pairs)
                mm_task_avx512_2g(&a, 2 * t, rows);
            else
                mm_task_avx512(&a, w->ng - 1, 0, rows);
        }
        return PL_OK;
    }
    int mtiles = (rows + PL_MR - 1) / PL_MR;
    long long tasks = (long long)w->ng * mtiles;
    /* Groups outermost so a weight panel stays in cache across the row tiles; dynamic so a
     * preempted thread on a shared machine does not hold the other at the barrier. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(b->threads) if (tasks > 1)
    for (long long t = 0; t < tasks; t++) {
        int g = (int)(t / mtiles), mt = (int)(t % mtiles);
        int m0 = mt * PL_MR, mr = rows - m0 < PL_MR ? rows - m0 : PL_MR;
        if (level == 3)
            mm_task_avx512(&a, g, m0, mr);
        else if (level == 2)
            mm_task_avx2(&a, g, m0, mr);
        else
            mm_task_portable(&a, g, m0, mr);
    }
    return PL_OK;
}

static int cpu_kv_append(void *ctx, pl_seq_cache *cache, const pl_kv_chunk *chunk, char *err, size_t err_len) {
    (void)ctx;
    return pl_seq_cache_append(cache, chunk, err, err_len);
}

static int cpu_paged_attention(void *ctx, const pl_paged_attention_args *args, char *err, size_t err_len) {
    (void)ctx;
    return pl_paged_attention(args, err, err_len);
}

/* Rows in parallel; greedy rows need no scratch. */
static int cpu_sample(void *ctx, const float *logits, int rows, int vocab, const pl_sample_req *reqs, int32_t *tokens,
                      char *err, size_t err_len) {
    pl_cpu_backend *b = ctx;
    int nomem = 0;
#pragma omp parallel num_threads(b->threads) if (rows > 1)
    {
        int32_t *idx = NULL;
        float *prob = NULL;
#pragma omp for schedule(dynamic, 1)
        for (int r = 0; r < rows; r++) {
            const float *row = logits + (size_t)r * vocab;
            if (reqs[r].temperature <= 0) {
                tokens[r] = pl_argmax(row, vocab);
                continue;
            }
            if (!idx) idx = malloc(sizeof(int32_t) * (size_t)vocab);
            if (!prob) prob = malloc(sizeof(float) * (size_t)vocab);
            if (!idx || !prob) {
#pragma omp atomic write
                nomem = 1;
                continue;
            }
            tokens[r] = pl_sample_row(&reqs[r], row, vocab, idx, prob);
        }
        free(idx);
        free(prob);
    }
    if (nomem) return pl_fail(err, err_len, PL_ERR_NOMEM, "sample: out of memory for %d-entry scratch", vocab);
    return PL_OK;
}

static const pl_backend_ops k_cpu_ops = {
    .name = "cpu",
    .weight_create = cpu_weight_create,
    .weight_free = cpu_weight_free,
    .weight_row = cpu_weight_row,
    .weight_bytes = cpu_weight_bytes,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .embed = cpu_embed,
    .rmsnorm = cpu_rmsnorm,
    .matmul = cpu_matmul,
    .rope_table = cpu_rope_table,
    .qk_norm_rope = cpu_qk_norm_rope,
    .swiglu = cpu_swiglu,
    .add = cpu_add,
    .copy_rows = cpu_copy_rows,
    .kv_append = cpu_kv_append,
    .paged_attention = cpu_paged_attention,
    .sample = cpu_sample,
};

const pl_backend_ops *pl_cpu_backend_ops(void) { return &k_cpu_ops; }
