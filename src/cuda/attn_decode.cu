/* Split-context (flash-decoding) paged attention for short queries, plus the generic path.
 *
 * A CTA of 4 warps owns one KV head of one batch row, up to ROWS query rows of that head's
 * GQA group (rows r = l * group + g), and one split of the context. Each warp walks its own
 * keys: LPK lanes share one key row (VEC contiguous elements each: 16-byte loads in the vector
 * variant), so a warp step covers 32 / LPK keys and K/V bytes are read once for all rows.
 * U steps of loads are issued before any use to keep bytes in flight. Each thread keeps an
 * online-softmax state (max, sum, out) in log2 units; the CTA merges them through shared
 * memory and writes the output (one split) or an FP32 partial for the merge kernel. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda/attn_cuda.h"

namespace {

__device__ __forceinline__ float bf16_bits_to_f32(uint32_t h) { return __uint_as_float(h << 16); }

template <typename T, int VEC> struct raw_of;
template <> struct raw_of<uint16_t, 8> { typedef uint4 type; };
template <> struct raw_of<float, 4> { typedef float4 type; };
template <> struct raw_of<uint16_t, 1> { typedef uint16_t type; };
template <> struct raw_of<float, 1> { typedef float type; };

__device__ __forceinline__ void zero_raw(uint4 &r) { r = make_uint4(0, 0, 0, 0); }
__device__ __forceinline__ void zero_raw(float4 &r) { r = make_float4(0.f, 0.f, 0.f, 0.f); }
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

template <typename T, int VEC, int LPK, int NPER, int ROWS, int U>
__global__ void __launch_bounds__(128, (ROWS >= 8 || VEC == 1) ? 2 : 4) split_attention_kernel(const pl_attn_params p) {
    typedef typename raw_of<T, VEC>::type raw_t;
    constexpr int KPW = 32 / LPK;      /* keys per warp step */
    constexpr int KPS = KPW * kWarps;  /* keys per CTA step */
    constexpr int TILE = KPS * U;      /* keys per tile (divides 64) */
    constexpr int NST = kWarps * KPW;  /* softmax states per row in the CTA */
    constexpr int DMAX = LPK * VEC * NPER;
    __shared__ float sm_ml[NST][ROWS][2];
    __shared__ float sm_o[NST][ROWS][DMAX];

    const int split = blockIdx.x;
    const int kvh = blockIdx.y % p.num_kv_heads;
    const int r0 = (blockIdx.y / p.num_kv_heads) * ROWS;
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
    for (int t0 = k_begin; t0 < k_stop; t0 += TILE) {
        /* one block-table lookup per tile when a tile cannot cross a page */
        int tile_page = 0, tile_slot0 = 0;
        if (one_page_per_tile) {
            const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
            tile_page = __ldg(bt + pidx);
            tile_slot0 = t0 - pidx * ps;
        }
        raw_t kr[U][NPER], vr[U][NPER];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = t0 + u * KPS + warp * KPW + sub;
#pragma unroll
            for (int i = 0; i < NPER; ++i) {
                zero_raw(kr[u][i]);
                zero_raw(vr[u][i]);
            }
            if (s < k_stop) {
                int page, slot;
                if (one_page_per_tile) {
                    page = tile_page;
                    slot = tile_slot0 + (s - t0);
                } else {
                    const int pidx = p.page_shift >= 0 ? (s >> p.page_shift) : s / ps;
                    page = __ldg(bt + pidx);
                    slot = s - pidx * ps;
                }
                const size_t base = (((size_t)page * p.num_kv_heads + kvh) * ps + slot) * D;
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
        float sc[U][ROWS];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int s = t0 + u * KPS + warp * KPW + sub;
            float kf[NPER][VEC];
#pragma unroll
            for (int i = 0; i < NPER; ++i) unpack(kr[u][i], kf[i]);
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
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float mx = sc[0][r];
#pragma unroll
            for (int u = 1; u < U; ++u) mx = fmaxf(mx, sc[u][r]);
            const float mnew = fmaxf(m[r], mx);
            if (mnew == -INFINITY) continue; /* nothing visible yet for this row */
            const float alpha = exp2f(m[r] - mnew);
            m[r] = mnew;
            ls[r] *= alpha;
#pragma unroll
            for (int i = 0; i < NPER; ++i)
#pragma unroll
                for (int j = 0; j < VEC; ++j) o[r][i][j] *= alpha;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const float pe = exp2f(sc[u][r] - mnew);
                ls[r] += pe;
#pragma unroll
                for (int i = 0; i < NPER; ++i) {
                    float vf[VEC];
                    unpack(vr[u][i], vf);
#pragma unroll
                    for (int j = 0; j < VEC; ++j) o[r][i][j] = fmaf(pe, vf[j], o[r][i][j]);
                }
            }
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

/* Combines the FP32 (max, sum, out) partials of every split of one output row. */
template <typename T>
__global__ void __launch_bounds__(128) merge_kernel(const pl_attn_params p) {
    const size_t orow = blockIdx.x;
    const int S = p.splits, D = p.head_dim;
    const float *ml = p.part_ml + orow * S * 2;
    float M = -INFINITY;
    for (int s = 0; s < S; ++s) M = fmaxf(M, ml[2 * s]);
    T *Out = static_cast<T *>(p.out);
    for (int d = threadIdx.x; d < D; d += blockDim.x) {
        float lsum = 0.f, acc = 0.f;
        if (M != -INFINITY) {
            for (int s = 0; s < S; ++s) {
                const float ms = ml[2 * s];
                if (ms == -INFINITY) continue;
                const float w = exp2f(ms - M);
                lsum += w * ml[2 * s + 1];
                acc += w * p.part_o[(orow * S + s) * D + d];
            }
        }
        store_elem(Out + orow * D + d, lsum > 0.f ? acc / lsum : 0.f);
    }
}

template <typename T, int VEC, int LPK, int NPER>
int launch_rows(const pl_attn_params *p, int rows, cudaStream_t stream) {
    const int R = p->group * p->query_len;
    const int chunks = (R + rows - 1) / rows;
    dim3 grid((unsigned)p->splits, (unsigned)(p->num_kv_heads * chunks), (unsigned)p->batch);
    switch (rows) {
    case 1: split_attention_kernel<T, VEC, LPK, NPER, 1, 8><<<grid, 128, 0, stream>>>(*p); break;
    case 2: split_attention_kernel<T, VEC, LPK, NPER, 2, 8><<<grid, 128, 0, stream>>>(*p); break;
    case 4: split_attention_kernel<T, VEC, LPK, NPER, 4, 4><<<grid, 128, 0, stream>>>(*p); break;
    default: split_attention_kernel<T, VEC, LPK, NPER, 8, 4><<<grid, 128, 0, stream>>>(*p); break;
    }
    return 0;
}

} // namespace

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
        rows = 8;
        const int nper = D <= 32 ? 1 : D <= 64 ? 2 : D <= 128 ? 4 : 8;
        if (dtype == PL_BF16) {
            switch (nper) {
            case 1: launch_rows<uint16_t, 1, 32, 1>(p, rows, stream); break;
            case 2: launch_rows<uint16_t, 1, 32, 2>(p, rows, stream); break;
            case 4: launch_rows<uint16_t, 1, 32, 4>(p, rows, stream); break;
            default: launch_rows<uint16_t, 1, 32, 8>(p, rows, stream); break;
            }
        } else {
            switch (nper) {
            case 1: launch_rows<float, 1, 32, 1>(p, rows, stream); break;
            case 2: launch_rows<float, 1, 32, 2>(p, rows, stream); break;
            case 4: launch_rows<float, 1, 32, 4>(p, rows, stream); break;
            default: launch_rows<float, 1, 32, 8>(p, rows, stream); break;
            }
        }
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "split attention kernel launch: %s", cudaGetErrorString(e));
    if (p->splits > 1) {
        const unsigned rows_out = (unsigned)((size_t)p->batch * p->query_len * p->num_heads);
        if (dtype == PL_BF16) merge_kernel<uint16_t><<<rows_out, 128, 0, stream>>>(*p);
        else merge_kernel<float><<<rows_out, 128, 0, stream>>>(*p);
        e = cudaGetLastError();
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "attention merge kernel launch: %s", cudaGetErrorString(e));
    }
    return PL_OK;
}
