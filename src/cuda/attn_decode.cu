/* Split-context (flash-decoding) paged attention for short queries, plus the generic path.
 *
 * A CTA of 4 warps owns one KV head of one batch row, up to ROWS query rows of that head's
 * GQA group (rows r = l * group + g), and one split of the context. Each warp walks its own
 * keys: LPK lanes share one key row (VEC contiguous elements each: 16-byte loads in the vector
 * variant), so a warp step covers 32 / LPK keys and K/V bytes are read once for all rows.
 * U steps of loads are issued before any use to keep bytes in flight. Each thread keeps an
 * online-softmax state (max, sum, out) in log2 units; the CTA merges them through shared
 * memory and writes the output (one split) or an FP32 partial for the merge kernel.
 * Vector variants stage K/V through a per-thread cp.async ring (kStages tiles, each thread
 * reads back only its own copies, so no barrier); the generic variant loads into registers.
 * bf16 head_dim 128 decode normally runs on tensor cores instead (attn_decode_mma.cu). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda/attn_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/diag_stamps.cuh"

namespace {

__device__ __forceinline__ float bf16_bits_to_f32(uint32_t h) { return __uint_as_float(h << 16); }

template <typename T, int VEC> struct raw_of;
template <> struct raw_of<uint16_t, 8> { typedef uint4 type; };
template <> struct raw_of<float, 4> { typedef float4 type; };
template <> struct raw_of<uint16_t, 1> { typedef uint16_t type; };
template <> struct raw_of<float, 1> { typedef float type; };

__device__ __forceinline__ void zero_raw(uint16_t &r) { r = 0; }
__device__ __forceinline__ void zero_raw(float &r) { r = 0.f; }

__device__ __forceinline__ void load_raw(uint4 &r, const uint16_t *p) { r = __ldg(reinterpret_cast<const uint4 *>(p)); }
__device__ __forceinline__ void load_raw(float4 &r, const float *p) { r = __ldg(reinterpret_cast<const float4 *>(p)); }
__device__ __forceinline__ void load_raw(uint16_t &r, const uint16_t *p) { r = __ldg(p); }
__device__ __forceinline__ void load_raw(float &r, const float *p) { r = __ldg(p); }

__device__ __forceinline__ void unpack(const uint4 &r, float (&o)[8]) {
    o[0] = bf16_bits_to_f32(r.x & 0xffffu); o[1] = __uint_as_float(r.x & 0xffff0000u);
    o[2] = bf16_bits_to_f32(r.y & 0xffffu); o[3] = __uint_as_float(r.y & 0xffff0000u);
    o[4] = bf16_bits_to_f32(r.z & 0xffffu); o[5] = __uint_as_float(r.z & 0xffff0000u);
    o[6] = bf16_bits_to_f32(r.w & 0xffffu); o[7] = __uint_as_float(r.w & 0xffff0000u);
}
__device__ __forceinline__ void unpack(const float4 &r, float (&o)[4]) { o[0] = r.x; o[1] = r.y; o[2] = r.z; o[3] = r.w; }
__device__ __forceinline__ void unpack(const uint16_t &r, float (&o)[1]) { o[0] = bf16_bits_to_f32(r); }
__device__ __forceinline__ void unpack(const float &r, float (&o)[1]) { o[0] = r; }

__device__ __forceinline__ float load_elem(const uint16_t *p) { return bf16_bits_to_f32(*p); }
__device__ __forceinline__ float load_elem(const float *p) { return *p; }

__device__ __forceinline__ void store_elem(uint16_t *p, float x) {
    /* round to nearest even, NaN kept quiet (as pl_f32_to_bf16) */
    uint32_t u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) { *p = (uint16_t)((u >> 16) | 0x40u); return; }
    u += 0x7fffu + ((u >> 16) & 1u);
    *p = (uint16_t)(u >> 16);
}
__device__ __forceinline__ void store_elem(float *p, float x) { *p = x; }

constexpr int kWarps = 4;
constexpr int kStages = 4;

/* ptx.cuh's cp_async16 on a generic shared-memory pointer */
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes) { cp_async16(smem_u32(dst), src, src_bytes); }

/* dynamic shared memory of split_attention_kernel: the cp.async ring (vector variants) or
 * at least the per-row merge buffers */
template <typename T, int VEC, int LPK, int NPER, int ROWS, int U> constexpr size_t split_smem_bytes() {
    constexpr size_t merge = (size_t)kWarps * (32 / LPK) * ROWS * (2 + LPK * VEC * NPER) * sizeof(float);
    constexpr size_t ring = VEC * sizeof(T) == 16 ? (size_t)kStages * U * NPER * 2 * 128 * 16 : 0;
    return merge > ring ? merge : ring;
}

template <typename T, int VEC, int LPK, int NPER, int ROWS, int U>
__global__ void __launch_bounds__(128, (ROWS >= 8 || VEC == 1) ? 2 : 3) split_attention_kernel(const pl_attn_params p) {
    pdl_trigger();
    pdl_wait();
    typedef typename raw_of<T, VEC>::type raw_t;
    constexpr int KPW = 32 / LPK;      /* keys per warp step */
    constexpr int KPS = KPW * kWarps;  /* keys per CTA step */
    constexpr int TILE = KPS * U;      /* keys per tile (divides 64) */
    constexpr int NST = kWarps * KPW;  /* softmax states per row in the CTA */
    constexpr int DMAX = LPK * VEC * NPER;
    constexpr bool kAsync = VEC * sizeof(T) == 16;
    extern __shared__ __align__(16) unsigned char dyn_smem[];
    float(*sm_ml)[ROWS][2] = reinterpret_cast<float(*)[ROWS][2]>(dyn_smem);
    float(*sm_o)[ROWS][DMAX] = reinterpret_cast<float(*)[ROWS][DMAX]>(dyn_smem + NST * ROWS * 2 * sizeof(float));

    const int split = blockIdx.x % p.splits;
    const int kvh = blockIdx.y;
    const int r0 = (blockIdx.x / p.splits) * ROWS;
    const int b = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int sub = lane / LPK, c = lane % LPK;
    const int G = p.group, L = p.query_len, D = p.head_dim;
    const int R = G * L;
    const int ctx = p.context_lens[b];
    const T *Q = static_cast<const T *>(p.q);

    float q[ROWS][NPER][VEC];
    int lim[ROWS]; /* last visible key index of each row, -1 for padding rows */
    int lmax = -1;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        const int rr = r0 + r;
        lim[r] = -1;
#pragma unroll
        for (int i = 0; i < NPER; ++i)
#pragma unroll
            for (int j = 0; j < VEC; ++j) q[r][i][j] = 0.f;
        if (rr < R) {
            const int l = rr / G, h = kvh * G + rr % G;
            lim[r] = p.causal ? l + ctx - L : ctx - 1;
            lmax = l;
            const T *qrow = Q + ((size_t)(b * L + l) * p.num_heads + h) * D;
#pragma unroll
            for (int i = 0; i < NPER; ++i) {
                const int d0 = (i * LPK + c) * VEC;
                if (VEC > 1) {
                    raw_t raw;
                    load_raw(raw, qrow + d0);
                    float f[VEC];
                    unpack(raw, f);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) q[r][i][j] = f[j] * p.scale_log2;
                } else if (d0 < D) {
                    q[r][i][0] = load_elem(qrow + d0) * p.scale_log2;
                }
            }
        }
    }
    int kv_end = ctx;
    if (p.causal && lmax >= 0) kv_end = min(ctx, lmax + ctx - L + 1);
    if (lmax < 0) kv_end = 0;
    const int k_begin = split * p.chunk;
    const int k_stop = min(k_begin + p.chunk, kv_end);

    float m[ROWS], ls[ROWS], o[ROWS][NPER][VEC];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        m[r] = -INFINITY;
        ls[r] = 0.f;
#pragma unroll
        for (int i = 0; i < NPER; ++i)
#pragma unroll
            for (int j = 0; j < VEC; ++j) o[r][i][j] = 0.f;
    }

    const T *K = static_cast<const T *>(p.k);
    const T *Vp = static_cast<const T *>(p.v);
    const int32_t *bt = p.block_table + (size_t)b * p.max_pages;
    const int ps = p.page_size;
    const bool one_page_per_tile = (ps % TILE) == 0;
    /* physical element offset of key s's row (s < k_stop): one table lookup per tile when
     * the tile cannot cross a page */
    auto row_base = [&](int t0, int s, int &tile_page, int &tile_slot0, bool first) -> size_t {
        int page, slot;
        if (one_page_per_tile) {
            if (first) {
                const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
                tile_page = __ldg(bt + pidx);
                tile_slot0 = t0 - pidx * ps;
            }
            page = tile_page;
            slot = tile_slot0 + (s - t0);
        } else {
            const int pidx = p.page_shift >= 0 ? (s >> p.page_shift) : s / ps;
            page = __ldg(bt + pidx);
            slot = s - pidx * ps;
        }
        return (((size_t)page * p.num_kv_heads + kvh) * ps + slot) * D;
    };
    /* online-softmax update of every row with the U keys of one tile */
    auto consume = [&](int t0, auto &&get_k, auto &&get_v) {
        float sc[U][ROWS];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = t0 + u * KPS + warp * KPW + sub;
            float kf[NPER][VEC];
#pragma unroll
            for (int i = 0; i < NPER; ++i) get_k(u, i, kf[i]);
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
                float dot = 0.f;
#pragma unroll
                for (int i = 0; i < NPER; ++i)
#pragma unroll
                    for (int j = 0; j < VEC; ++j) dot = fmaf(q[r][i][j], kf[i][j], dot);
#pragma unroll
                for (int off = LPK / 2; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
                sc[u][r] = (s < k_stop && s <= lim[r]) ? dot : -INFINITY;
            }
        }
        float pe[U][ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float mx = sc[0][r];
#pragma unroll
            for (int u = 1; u < U; ++u) mx = fmaxf(mx, sc[u][r]);
            const float mnew = fmaxf(m[r], mx);
            const float mb = mnew == -INFINITY ? 0.f : mnew; /* nothing visible yet: all p = 0 */
            const float alpha = exp2f(m[r] - mb);
            m[r] = mnew;
            float sum = 0.f;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                pe[u][r] = exp2f(sc[u][r] - mb);
                sum += pe[u][r];
            }
            ls[r] = ls[r] * alpha + sum;
#pragma unroll
            for (int i = 0; i < NPER; ++i)
#pragma unroll
                for (int j = 0; j < VEC; ++j) o[r][i][j] *= alpha;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
#pragma unroll
            for (int i = 0; i < NPER; ++i) {
                float vf[VEC];
                get_v(u, i, vf);
#pragma unroll
                for (int r = 0; r < ROWS; ++r)
#pragma unroll
                    for (int j = 0; j < VEC; ++j) o[r][i][j] = fmaf(pe[u][r], vf[j], o[r][i][j]);
            }
        }
    };

    if constexpr (kAsync) {
        /* per-thread ring of STAGES tiles filled by cp.async: each thread reads back only
         * what it copied, so no barrier is needed and STAGES - 1 tiles stay in flight */
        raw_t *ring = reinterpret_cast<raw_t *>(dyn_smem);
        const int ntiles = k_stop > k_begin ? (k_stop - k_begin + TILE - 1) / TILE : 0;
        auto slot_of = [&](int stage, int u, int i, int kv) -> raw_t * {
            return ring + ((((stage * U + u) * NPER + i) * 2 + kv) * 128 + threadIdx.x);
        };
        auto issue = [&](int it) {
            const int t0 = k_begin + it * TILE, stage = it % kStages;
            int tile_page = 0, tile_slot0 = 0;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int s = t0 + u * KPS + warp * KPW + sub;
                const bool valid = s < k_stop;
                size_t base = 0;
                if (valid || (one_page_per_tile && u == 0)) {
                    /* t0 < k_stop always, so the tile's page entry is live */
                    base = row_base(t0, valid ? s : t0, tile_page, tile_slot0, u == 0);
                }
#pragma unroll
                for (int i = 0; i < NPER; ++i) {
                    const int d0 = (i * LPK + c) * VEC;
                    cp_async16(slot_of(stage, u, i, 0), valid ? (const void *)(K + base + d0) : (const void *)K, valid ? 16 : 0);
                    cp_async16(slot_of(stage, u, i, 1), valid ? (const void *)(Vp + base + d0) : (const void *)Vp, valid ? 16 : 0);
                }
            }
        };
#pragma unroll
        for (int st = 0; st < kStages - 1; ++st) {
            if (st < ntiles) issue(st);
            cp_async_commit();
        }
        for (int it = 0; it < ntiles; ++it) {
            if (it + kStages - 1 < ntiles) issue(it + kStages - 1);
            cp_async_commit();
            cp_async_wait<kStages - 1>();
            const int stage = it % kStages;
            consume(k_begin + it * TILE,
                    [&](int u, int i, float (&f)[VEC]) { unpack(*slot_of(stage, u, i, 0), f); },
                    [&](int u, int i, float (&f)[VEC]) { unpack(*slot_of(stage, u, i, 1), f); });
        }
        cp_async_wait<0>();
        __syncthreads(); /* the merge below reuses the ring */
    } else {
        for (int t0 = k_begin; t0 < k_stop; t0 += TILE) {
            int tile_page = 0, tile_slot0 = 0;
            raw_t kr[U][NPER], vr[U][NPER];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int s = t0 + u * KPS + warp * KPW + sub;
#pragma unroll
                for (int i = 0; i < NPER; ++i) {
                    zero_raw(kr[u][i]);
                    zero_raw(vr[u][i]);
                }
                const bool valid = s < k_stop;
                if (valid || (one_page_per_tile && u == 0)) {
                    const size_t base = row_base(t0, valid ? s : t0, tile_page, tile_slot0, u == 0);
                    if (valid) {
#pragma unroll
                        for (int i = 0; i < NPER; ++i) {
                            const int d0 = (i * LPK + c) * VEC;
                            if (VEC > 1 || d0 < D) {
                                load_raw(kr[u][i], K + base + d0);
                                load_raw(vr[u][i], Vp + base + d0);
                            }
                        }
                    }
                }
            }
            consume(t0, [&](int u, int i, float (&f)[VEC]) { unpack(kr[u][i], f); },
                    [&](int u, int i, float (&f)[VEC]) { unpack(vr[u][i], f); });
        }
    }

    /* merge the NST states of each row */
    const int st = warp * KPW + sub;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        if (c == 0) {
            sm_ml[st][r][0] = m[r];
            sm_ml[st][r][1] = ls[r];
        }
#pragma unroll
        for (int i = 0; i < NPER; ++i)
#pragma unroll
            for (int j = 0; j < VEC; ++j) sm_o[st][r][(i * LPK + c) * VEC + j] = o[r][i][j];
    }
    __syncthreads();
    T *Out = static_cast<T *>(p.out);
    for (int idx = threadIdx.x; idx < ROWS * DMAX; idx += blockDim.x) {
        const int r = idx / DMAX, d = idx % DMAX;
        const int rr = r0 + r;
        if (rr >= R || d >= D) continue;
        float M = -INFINITY;
#pragma unroll
        for (int t = 0; t < NST; ++t) M = fmaxf(M, sm_ml[t][r][0]);
        float lsum = 0.f, acc = 0.f;
        if (M != -INFINITY) {
#pragma unroll
            for (int t = 0; t < NST; ++t) {
                const float mt = sm_ml[t][r][0];
                if (mt == -INFINITY) continue;
                const float w = exp2f(mt - M);
                lsum += w * sm_ml[t][r][1];
                acc += w * sm_o[t][r][d];
            }
        }
        const int l = rr / G, h = kvh * G + rr % G;
        const size_t orow = (size_t)(b * L + l) * p.num_heads + h;
        if (p.splits == 1) {
            store_elem(Out + orow * D + d, lsum > 0.f ? acc / lsum : 0.f);
        } else {
            const size_t slotp = orow * p.splits + split;
            p.part_o[slotp * D + d] = acc;
            if (d == 0) {
                p.part_ml[slotp * 2] = M;
                p.part_ml[slotp * 2 + 1] = lsum;
            }
        }
    }
}

/* Combines the FP32 (max, sum, out) partials of every split of one output row: 8 warps
 * take every 8th split (float4 per lane covers 128 dims per pass), then reduce in smem. */
template <typename T>
__global__ void __launch_bounds__(256) merge_kernel(const pl_attn_params p) {
    pdl_trigger(); /* the output projection after us may start loading its weights */
    PL_DIAG_SCOPE(3, p.units, 0, 0);
    pdl_wait();
    PL_DIAG_MARK(4);
    __shared__ float red[8][260];
    __shared__ float red_ml[8][2];
    const size_t orow = blockIdx.x;
    const int S = p.splits, D = p.head_dim;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const float *ml = p.part_ml + orow * S * 2;
    /* Each warp folds its splits (warp, warp + 8, ...) under its own running max, so a split's
     * (max, sum) and output chunk load together: one L2 round trip up to 8 splits, where the
     * global max first cost two. The warps meet in shared memory. */
    for (int d0 = 0; d0 < D; d0 += 128) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f}, mw = -INFINITY, lw = 0.f;
        const int d = d0 + lane * 4;
        for (int s = warp; s < S; s += 8) {
            const float ms = ml[2 * s], ls = ml[2 * s + 1];
            const float *src = p.part_o + (orow * S + s) * D;
            float v[4] = {0.f, 0.f, 0.f, 0.f};
            if ((D & 3) == 0 && d + 3 < D) {
                const float4 q = *reinterpret_cast<const float4 *>(src + d);
                v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
            } else {
                for (int e = 0; e < 4; ++e)
                    if (d + e < D) v[e] = src[d + e];
            }
            if (ms == -INFINITY) continue; /* an empty split */
            const float mn = fmaxf(mw, ms), a = exp2f(mw - mn), b = exp2f(ms - mn);
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[e] = acc[e] * a + b * v[e];
            lw = lw * a + b * ls;
            mw = mn;
        }
        for (int e = 0; e < 4; ++e) red[warp][lane * 4 + e] = acc[e];
        if (lane == 0) red_ml[warp][0] = mw, red_ml[warp][1] = lw;
        __syncthreads();
        if (threadIdx.x < 128) {
            float M = -INFINITY, o = 0.f, l = 0.f;
#pragma unroll
            for (int w = 0; w < 8; ++w) M = fmaxf(M, red_ml[w][0]);
#pragma unroll
            for (int w = 0; w < 8; ++w) {
                const float m = red_ml[w][0];
                if (m == -INFINITY) continue;
                const float f = exp2f(m - M);
                o += f * red[w][threadIdx.x];
                l += f * red_ml[w][1];
            }
            const int dd = d0 + threadIdx.x;
            if (dd < D) store_elem(static_cast<T *>(p.out) + orow * D + dd, l > 0.f ? o / l : 0.f);
        }
        __syncthreads();
    }
}

template <typename T, int VEC, int LPK, int NPER, int ROWS, int U>
void launch_one(const pl_attn_params *p, dim3 grid, cudaStream_t stream) {
    constexpr size_t smem = split_smem_bytes<T, VEC, LPK, NPER, ROWS, U>();
    if (smem > 48 * 1024)
        cudaFuncSetAttribute(split_attention_kernel<T, VEC, LPK, NPER, ROWS, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    launch_pdl(split_attention_kernel<T, VEC, LPK, NPER, ROWS, U>, grid, dim3(128), smem, stream, p->pdl, *p);
}

template <typename T, int VEC, int LPK, int NPER>
int launch_rows(const pl_attn_params *p, int rows, cudaStream_t stream) {
    const int R = p->group * p->query_len;
    const int chunks = (R + rows - 1) / rows;
    dim3 grid((unsigned)(p->splits * chunks), (unsigned)p->num_kv_heads, (unsigned)p->batch);
    switch (rows) {
    case 1: launch_one<T, VEC, LPK, NPER, 1, 4>(p, grid, stream); break;
    case 2: launch_one<T, VEC, LPK, NPER, 2, 4>(p, grid, stream); break;
    case 4: launch_one<T, VEC, LPK, NPER, 4, 4>(p, grid, stream); break;
    default: launch_one<T, VEC, LPK, NPER, 8, (VEC == 1 ? 4 : 2)>(p, grid, stream); break;
    }
    return 0;
}

} // namespace

PL_DIAG_SETTER(pl_diag_set_attn_split)

extern "C" int pl_cuda_attn_split_launch(const pl_attn_params *p, pl_dtype dtype, int vector, int rows_per_cta,
                                         cudaStream_t stream, char *err, size_t err_len) {
    const int D = p->head_dim;
    int rows = rows_per_cta <= 1 ? 1 : rows_per_cta <= 2 ? 2 : rows_per_cta <= 4 ? 4 : 8;
    if (vector) {
        if (dtype == PL_BF16 && D == 128) launch_rows<uint16_t, 8, 16, 1>(p, rows, stream);
        else if (dtype == PL_BF16 && D == 64) launch_rows<uint16_t, 8, 8, 1>(p, rows, stream);
        else if (dtype == PL_F32 && D == 128) launch_rows<float, 4, 32, 1>(p, rows, stream);
        else return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "vector attention kernel: head_dim %d with this dtype has no vector variant", D);
    } else {
        /* generic: 8 rows per CTA, scalar loads, lanes over dims */
        const int R = p->group * p->query_len;
        dim3 grid((unsigned)(p->splits * ((R + 7) / 8)), (unsigned)p->num_kv_heads, (unsigned)p->batch);
        const int nper = D <= 32 ? 1 : D <= 64 ? 2 : D <= 128 ? 4 : 8;
        if (dtype == PL_BF16) {
            switch (nper) {
            case 1: launch_one<uint16_t, 1, 32, 1, 8, 4>(p, grid, stream); break;
            case 2: launch_one<uint16_t, 1, 32, 2, 8, 4>(p, grid, stream); break;
            case 4: launch_one<uint16_t, 1, 32, 4, 8, 4>(p, grid, stream); break;
            default: launch_one<uint16_t, 1, 32, 8, 8, 4>(p, grid, stream); break;
            }
        } else {
            switch (nper) {
            case 1: launch_one<float, 1, 32, 1, 8, 4>(p, grid, stream); break;
            case 2: launch_one<float, 1, 32, 2, 8, 4>(p, grid, stream); break;
            case 4: launch_one<float, 1, 32, 4, 8, 4>(p, grid, stream); break;
            default: launch_one<float, 1, 32, 8, 8, 4>(p, grid, stream); break;
            }
        }
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "split attention kernel launch: %s", cudaGetErrorString(e));
    return pl_cuda_attn_merge_launch(p, dtype, stream, err, err_len);
}

extern "C" int pl_cuda_attn_merge_launch(const pl_attn_params *p, pl_dtype dtype, cudaStream_t stream, char *err, size_t err_len) {
    if (p->splits > 1) {
        const unsigned rows_out = (unsigned)((size_t)p->batch * p->query_len * p->num_heads);
        if (dtype == PL_BF16) launch_pdl(merge_kernel<uint16_t>, dim3(rows_out), dim3(256), 0, stream, p->pdl, *p);
        else launch_pdl(merge_kernel<float>, dim3(rows_out), dim3(256), 0, stream, p->pdl, *p);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "attention merge kernel launch: %s", cudaGetErrorString(e));
    }
    return PL_OK;
}
