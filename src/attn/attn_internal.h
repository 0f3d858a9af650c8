/* Internals of the CPU paged-attention operator: schedules, SIMD micro-kernels, helpers. */
#ifndef PL_ATTN_INTERNAL_H
#define PL_ATTN_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bf16.h"
#include "pagellm/attention.h"

/* SIMD levels of the micro-kernels; PL_SIMD_AUTO picks the best the CPU has. */
enum { PL_SIMD_AUTO = -1, PL_SIMD_PORTABLE = 0, PL_SIMD_AVX2 = 1, PL_SIMD_AVX512 = 2, PL_SIMD_AVX512_BF16 = 3 };

#define PL_ATTN_BK 32       /* keys per K/V tile */
#define PL_ATTN_PAD 16      /* head_dim is padded to this in staged tiles */
#define PL_ATTN_LOG2E 1.44269504088896340736

int pl_attn_simd_detect(void);
const char *pl_attn_simd_name(int level);

/* Validation + dispatch with the SIMD level forced (tests cover every level this way).
 * A level the CPU lacks is lowered to the best available one. */
int pl_paged_attention_simd(const pl_paged_attention_args *args, int simd_level, char *err, size_t err_len);

/* Schedules; arguments already validated. PL_OK or PL_ERR_NOMEM; out untouched on error. */
int pl_attn_reference(const pl_paged_attention_args *a);
int pl_attn_scalar(const pl_paged_attention_args *a);
int pl_attn_decode(const pl_paged_attention_args *a, int simd_level);
int pl_attn_flash(const pl_paged_attention_args *a, int simd_level);

#define PL_ATTN_DEC_GROUPS 64 /* KV heads x ceil(rows per head / 4) the fused bf16 decode kernel takes */

/* Arguments of the fused bf16 decode kernel (head_dim 128): keys [k0, k1) of one batch row
 * for KV heads [h0, h0 + nheads), read in place from the pages through the block table.
 * Each head's online-softmax state (m, l in log2 units, o unnormalized) is read and updated
 * like pl_attn_sweep's. */
typedef struct pl_attn_dec_args {
    const uint16_t *kpages, *vpages; /* the layer's key / value pages */
    const int32_t *bt;               /* block-table row */
    size_t page_stride;              /* elements from one page to the next (num_kv_heads * page_size * 128) */
    int page_size, k0, k1;
    int h0, nheads;                  /* KV heads */
    const uint16_t *q;               /* nheads x rph raw bf16 query rows of 128 */
    int rph;                         /* query rows per KV head (query_len x group) */
    const int *lim;                  /* visible keys of each of the rph rows (same for every head) */
    float qscale;                    /* scale * log2(e) */
    float *state;                    /* per head: m[rph], l[rph], o[rph][128] */
    size_t state_stride;             /* floats from one head's state to the next */
    float *ow;                       /* scratch, 64-byte aligned: nheads * ceil(rph / 4) * 4 * 128 floats */
    const uint16_t *zero;            /* a row of 128 zero bf16 */
} pl_attn_dec_args;

/* Micro-kernels on f32 tiles; head_dim padded to dp (multiple of 16) with zeros.
 * qk_dot: s[i][j] = q[i] . k[j] for j < nkp (K rows by pointer, nkp multiple of 16).
 * qk_kt:  same with K staged transposed, kt[d * PL_ATTN_BK + j].
 * softmax: masks key j unless t0 + j < lim[i] and j < nk, folds the tile into the running
 *   (m, l) of each row (scores in log2 units), writes probabilities to s (0 where masked,
 *   for all nkp columns) and the rescale factor of each row to alpha.
 * pv: o[i] = alpha[i] * o[i] + sum_{j < nk} p[i][j] v[j]. */
typedef struct pl_attn_kernels {
    void (*qk_dot)(const float *q, int ldq, int nrows, const float *const *krows, int nkp, int dp, float *s, int lds);
    void (*qk_kt)(const float *q, int ldq, int nrows, const float *kt, int nkp, int dp, float *s, int lds);
    void (*softmax)(float *s, int lds, int nrows, int nk, int nkp, int t0, const int *lim, float *m, float *l,
                    float *alpha);
    void (*pv)(const float *p, int ldp, int nrows, const float *const *vrows, int nk, int dp, const float *alpha,
               float *o, int ldo);
    void (*bf16_to_f32)(float *dst, const uint16_t *src, int n);
    /* bf16 pages read in place, head_dim 128 only (NULL where the level has none):
     * qk_bf16: s[i][j] = qscale * (q[i] . k[j]) with q raw bf16 rows of 128 (stride 128);
     * pv_bf16: pv with V rows widened in registers.
     * Both prefetch npf contiguous rows of 128 from pf (NULL, 0: none), spread over the loop:
     * the decode sweep passes the K (V) rows one page ahead so DRAM transfers overlap compute
     * instead of stalling in one burst at each page. */
    void (*qk_bf16)(const uint16_t *q, int nrows, const uint16_t *const *krows, int nkp, float qscale, float *s,
                    int lds, const uint16_t *pf, int npf);
    void (*pv_bf16)(const float *p, int ldp, int nrows, const uint16_t *const *vrows, int nk, const float *alpha,
                    float *o, int ldo, const uint16_t *pf, int npf);
    /* qk_bf16 for many rows: K staged as bf16 pairs transposed, kt[w * PL_ATTN_BK + j] = word
     * w (dims 2w, 2w+1) of key j; Q rows broadcast a word at a time. */
    void (*qk_kt_bf16)(const uint16_t *q, int nrows, const uint32_t *kt, int nkp, float qscale, float *s, int lds);
    /* The whole decode sweep of one (row, context range) for a range of KV heads over bf16
     * pages in place, head_dim 128, at most PL_ATTN_DEC_GROUPS row groups (NULL where the
     * level has none). */
    void (*decode_bf16)(const struct pl_attn_dec_args *d);
} pl_attn_kernels;

extern const pl_attn_kernels pl_attn_kernels_portable;
extern const pl_attn_kernels pl_attn_kernels_avx2;
extern const pl_attn_kernels pl_attn_kernels_avx512;
extern const pl_attn_kernels pl_attn_kernels_avx512_bf16;
const pl_attn_kernels *pl_attn_kernels_for(int level);

/* Shared pieces of the tiled schedules (attn_tile.c). */
typedef struct pl_attn_geom {
    const pl_paged_attention_args *a;
    int group;          /* query heads per KV head */
    int dp;             /* head_dim rounded up to PL_ATTN_PAD */
    float qscale;       /* scale * log2(e) */
    size_t esize;       /* bytes per element */
} pl_attn_geom;

void pl_attn_geom_init(pl_attn_geom *g, const pl_paged_attention_args *a);

/* Per-thread scratch of the tiled sweep. */
typedef struct pl_attn_work {
    float *kstage;          /* [BK][dp] or transposed [dp][BK] */
    float *vstage;          /* [BK][dp] */
    float *s;               /* [rows][BK] */
    float *alpha;           /* [rows] */
    const float *krows[PL_ATTN_BK];
    const float *vrows[PL_ATTN_BK];
    const float *zero;      /* a zero row of dp floats (also a zero bf16 row) */
    const uint16_t *krows16[PL_ATTN_BK];
    const uint16_t *vrows16[PL_ATTN_BK];
} pl_attn_work;

size_t pl_attn_work_floats(int dp, int max_rows);
void pl_attn_work_bind(pl_attn_work *w, float *mem, int dp, int max_rows, const float *zero);

/* Whether the sweep reads bf16 pages in place (head_dim 128 with bf16 kernels, few rows). */
static inline int pl_attn_raw_bf16(const pl_paged_attention_args *a, const pl_attn_kernels *k, int use_kt) {
    return a->dtype == PL_BF16 && a->head_dim == 128 && k->qk_bf16 && (!use_kt || k->qk_kt_bf16);
}

/* Stages rows [b, l0, l0 + nl) x heads [kvh*G, kvh*G + G) of the query, pre-scaled: row
 * i = (l - l0) * G + g. lim[i] = the number of visible keys of the row. */
void pl_attn_stage_q(const pl_attn_geom *g, const pl_attn_kernels *k, int b, int kvh, int l0, int nl, float *qs,
                     int *lim);
/* Same rows copied raw (bf16, unscaled) for the in-place bf16 kernels. */
void pl_attn_stage_q_bf16(const pl_attn_geom *g, int b, int kvh, int l0, int nl, uint16_t *q16);

/* Runs the online-softmax sweep over keys [k0, k1) of (b, kvh) for nrows staged query rows.
 * use_kt: stage K transposed (many rows) instead of row pointers (few rows). */
void pl_attn_sweep(const pl_attn_geom *g, const pl_attn_kernels *k, pl_attn_work *w, int b, int kvh, int k0, int k1,
                   const float *qs, int nrows, const int *lim, float *m, float *l, float *o, int use_kt);

/* Writes o[i] / l[i] (or 0) to out rows as staged by pl_attn_stage_q. */
void pl_attn_store(const pl_attn_geom *g, int b, int kvh, int l0, int nl, const float *o, const float *l);

/* Zeros the output of inactive rows (ctx == 0). */
void pl_attn_zero_inactive(const pl_paged_attention_args *a);

static inline float pl_attn_load(const void *base, pl_dtype dt, size_t idx) {
    return dt == PL_F32 ? ((const float *)base)[idx] : pl_bf16_to_f32(((const uint16_t *)base)[idx]);
}

static inline void pl_attn_store1(void *base, pl_dtype dt, size_t idx, float v) {
    if (dt == PL_F32) ((float *)base)[idx] = v;
    else ((uint16_t *)base)[idx] = pl_f32_to_bf16(v);
}

/* Number of keys visible to query row l of a row with context ctx. */
static inline int pl_attn_visible(const pl_paged_attention_args *a, int ctx, int l) {
    if (!a->causal) return ctx;
    int v = ctx - a->query_len + l + 1;
    return v < 0 ? 0 : v > ctx ? ctx : v;
}

static inline float pl_attn_scale(const pl_paged_attention_args *a) {
    return a->scale > 0.0f ? a->scale : (float)(1.0 / sqrt((double)a->head_dim));
}

#endif
