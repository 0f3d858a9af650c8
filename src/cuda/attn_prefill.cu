/* Paged FlashAttention-2 for bf16, head_dim 128, on tensor cores (mma.sync m16n8k16).
 *
 * A CTA of W warps owns 16 * W query rows of one head; each warp owns 16 rows. K/V tiles of
 * 64 keys are staged in shared memory by cp.async (double buffered) with the page translated
 * while loading: one block-table lookup per tile when page_size % 64 == 0, one per key row
 * otherwise (any page size). Keys at or past the context are zero-filled (stale NaN in a
 * reused page never reaches P*V) and masked to -inf. Rows are 256 bytes, stored with a 16-byte
 * chunk XOR swizzle so ldmatrix reads are free of bank conflicts. Scores get scale * log2(e)
 * once and the softmax uses exp2; P is rounded to bf16 in registers and fed to the P*V mma
 * straight from the S accumulators. Causal: tiles wholly past a block's last visible key are
 * never loaded; only tiles crossing the diagonal or the context end are masked per element. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "cuda/attn_cuda.h"
#include "cuda/ptx.cuh"

namespace {

constexpr int kD = 128;   /* head_dim */
constexpr int kBK = 64;   /* keys per tile */
constexpr int kRowBytes = kD * 2;

/* Stages rows [0, 64) of a K or V tile starting at logical key t0; keys >= kv_len are zeroed. */
template <int THREADS>
__device__ __forceinline__ void load_tile(uint32_t dst, const uint16_t *pages, const pl_attn_params &p,
                                          const int32_t *bt, int kvh, int t0, int kv_len) {
    constexpr int kChunks = kBK * (kRowBytes / 16); /* 1024 */
    const int ps = p.page_size;
    const bool one_lookup = (ps % kBK) == 0;
    if (one_lookup && t0 + kBK <= kv_len) {
        /* full tile inside one page: one lookup, then constant strides (rows r0 + 8 i share
         * the swizzle phase r0 & 7, so the smem offset steps by 8 rows as well) */
        const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
        const int page = __ldg(bt + pidx);
        const int r0 = threadIdx.x >> 4, ch = threadIdx.x & 15;
        const uint16_t *src = pages + (((size_t)page * p.num_kv_heads + kvh) * ps + (t0 - pidx * ps) + r0) * kD + ch * 8;
        const uint32_t d0 = dst + swz(r0, ch);
        constexpr int kRowsPerPass = THREADS / 16;
#pragma unroll
        for (int i = 0; i < kChunks / THREADS; ++i) cp_async16(d0 + i * kRowsPerPass * kRowBytes, src + (size_t)i * kRowsPerPass * kD, 16);
        return;
    }
    int tile_page = 0, tile_slot0 = 0;
    if (one_lookup && t0 < kv_len) {
        const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
        tile_page = __ldg(bt + pidx);
        tile_slot0 = t0 - pidx * ps;
    }
#pragma unroll
    for (int i = 0; i < kChunks / THREADS; ++i) {
        const int id = threadIdx.x + i * THREADS;
        const int r = id >> 4, ch = id & 15;
        const int s = t0 + r;
        const void *src = pages;
        int bytes = 0;
        if (s < kv_len) {
            int page, slot;
            if (one_lookup) {
                page = tile_page;
                slot = tile_slot0 + r;
            } else {
                const int pidx = p.page_shift >= 0 ? (s >> p.page_shift) : s / ps;
                page = __ldg(bt + pidx);
                slot = s - pidx * ps;
            }
            src = pages + (((size_t)page * p.num_kv_heads + kvh) * ps + slot) * kD + ch * 8;
            bytes = 16;
        }
        cp_async16(dst + swz(r, ch), src, bytes);
    }
}

template <int WARPS, int MT, bool SPLITKV>
__global__ void __launch_bounds__(WARPS * 32, (WARPS == 4 ? 2 : 1)) mma_attention_kernel(const pl_attn_params p) {
    pdl_trigger();
    pdl_wait();
    constexpr int THREADS = WARPS * 32;
    constexpr int WROWS = 16 * MT;          /* query rows per warp */
    constexpr int BQ = WARPS * WROWS;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sQ = smem_u32(smem);
    const uint32_t sK = sQ + BQ * kRowBytes;            /* [2][64][128] */
    const uint32_t sV = sK + 2 * kBK * kRowBytes;       /* [2][64][128] */

    const int nqb = gridDim.x;
    const int qb = nqb - 1 - (int)blockIdx.x; /* heaviest causal blocks first */
    const int h = blockIdx.y, b = blockIdx.z;
    const int kvh = h / p.group;
    const int L = p.query_len;
    const int q0 = qb * BQ;
    const int ctx = p.context_lens[b];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const uint16_t *Q = static_cast<const uint16_t *>(p.q);
    const uint16_t *K = static_cast<const uint16_t *>(p.k);
    const uint16_t *V = static_cast<const uint16_t *>(p.v);
    uint16_t *Out = static_cast<uint16_t *>(p.out);
    const int32_t *bt = p.block_table + (size_t)b * p.max_pages;

    const int q_last = min(q0 + BQ, L) - 1;
    int kv_end = ctx;
    if (p.causal) kv_end = min(ctx, q_last + ctx - L + 1);
    if (kv_end < 0) kv_end = 0;
    const int n_tiles = (kv_end + kBK - 1) / kBK;

    /* Q tile: rows past L are zero-filled; joins K(0)'s group */
#pragma unroll
    for (int i = 0; i < BQ * 16 / THREADS; ++i) {
        const int id = threadIdx.x + i * THREADS;
        const int r = id >> 4, ch = id & 15;
        const int l = q0 + r;
        const void *src = Q;
        int bytes = 0;
        if (l < L) {
            src = Q + ((size_t)(b * L + l) * p.num_heads + h) * kD + ch * 8;
            bytes = 16;
        }
        cp_async16(sQ + swz(r, ch), src, bytes);
    }
    if (n_tiles > 0) load_tile<THREADS>(sK, K, p, bt, kvh, 0, kv_end);
    if (SPLITKV) cp_async_commit();
    if (n_tiles > 0) load_tile<THREADS>(sV, V, p, bt, kvh, 0, kv_end);
    cp_async_commit();

    float acc[MT][16][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < 16; ++i) acc[mt][i][0] = acc[mt][i][1] = acc[mt][i][2] = acc[mt][i][3] = 0.f;
    float row_m[MT][2], row_l[MT][2];
    int lim[MT][2];
    const int g = lane >> 2, t4 = lane & 3;
    const int wrow0 = q0 + warp * WROWS; /* first query row of this warp */
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            row_m[mt][hr] = -INFINITY;
            row_l[mt][hr] = 0.f;
            const int row = wrow0 + mt * 16 + g + hr * 8;
            lim[mt][hr] = p.causal ? row + ctx - L : ctx - 1;
        }
    uint32_t qa[MT == 1 ? 8 : 1][4];
    /* first key index at which some row of this CTA is masked */
    const int mask_from = p.causal ? min(ctx, q0 + ctx - L + 1) : ctx;

    for (int j = 0; j < n_tiles; ++j) {
        const int buf = j & 1;
        if (j + 1 < n_tiles) load_tile<THREADS>(sK + (buf ^ 1) * kBK * kRowBytes, K, p, bt, kvh, (j + 1) * kBK, kv_end);
        if (SPLITKV) {
            cp_async_commit();
            cp_async_wait<2>(); /* K(j) (and Q) landed; V(j), K(j+1) may be in flight */
        } else {
            /* K(j+1) and V(j+1) go out together; one barrier per tile */
            if (j + 1 < n_tiles) load_tile<THREADS>(sV + (buf ^ 1) * kBK * kRowBytes, V, p, bt, kvh, (j + 1) * kBK, kv_end);
            cp_async_commit();
            cp_async_wait<1>();
        }
        __syncthreads();
        if (MT == 1 && j == 0) {
#pragma unroll
            for (int ks = 0; ks < 8; ++ks)
                ldmatrix_x4(sQ + swz(warp * 16 + (lane & 15), ks * 2 + (lane >> 4)), qa[ks % (MT == 1 ? 8 : 1)][0],
                            qa[ks % (MT == 1 ? 8 : 1)][1], qa[ks % (MT == 1 ? 8 : 1)][2], qa[ks % (MT == 1 ? 8 : 1)][3]);
        }
        const uint32_t kb = sK + buf * kBK * kRowBytes;
        const uint32_t vb = sV + buf * kBK * kRowBytes;

        float s[MT][8][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int i = 0; i < 8; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 8; ++ks) {
            uint32_t qf[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if (MT == 1) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) qf[mt][e] = qa[ks % (MT == 1 ? 8 : 1)][e];
                } else {
                    ldmatrix_x4(sQ + swz(warp * WROWS + mt * 16 + (lane & 15), ks * 2 + (lane >> 4)), qf[mt][0], qf[mt][1], qf[mt][2], qf[mt][3]);
                }
            }
#pragma unroll
            for (int np = 0; np < 4; ++np) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4(kb + swz(np * 16 + (lane & 7) + ((lane >> 4) << 3), ks * 2 + ((lane >> 3) & 1)), b0, b1, b2, b3);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_bf16(s[mt][2 * np], qf[mt], b0, b1);
                    mma_bf16(s[mt][2 * np + 1], qf[mt], b2, b3);
                }
            }
        }
        const int t0 = j * kBK;
        const bool need_mask = t0 + kBK > mask_from;
        if (need_mask) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int key = t0 + nt * 8 + 2 * t4 + (e & 1);
                        if (key >= ctx || key > lim[mt][e >> 1]) s[mt][nt][e] = -INFINITY;
                    }
        }
        const float sl2 = p.scale_log2; /* scores stay raw: max commutes with the positive scale */
        /* online softmax, rows g (e = 0,1) and g + 8 (e = 2,3); a row spans the 4 lanes of a quad */
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < 8; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * hr], s[mt][nt][2 * hr + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float mnew = fmaxf(row_m[mt][hr], mx); /* raw units */
                const float mbase = mnew == -INFINITY ? 0.f : mnew * sl2;
                const float alpha = ex2(fmaf(row_m[mt][hr], sl2, -mbase));
                row_m[mt][hr] = mnew;
                float sum = 0.f;
#pragma unroll
                for (int nt = 0; nt < 8; ++nt) {
                    const float p0 = ex2(fmaf(s[mt][nt][2 * hr], sl2, -mbase));
                    const float p1 = ex2(fmaf(s[mt][nt][2 * hr + 1], sl2, -mbase));
                    s[mt][nt][2 * hr] = p0;
                    s[mt][nt][2 * hr + 1] = p1;
                    sum += p0 + p1;
                }
                row_l[mt][hr] = row_l[mt][hr] * alpha + sum;
#pragma unroll
                for (int dt = 0; dt < 16; ++dt) {
                    acc[mt][dt][2 * hr] *= alpha;
                    acc[mt][dt][2 * hr + 1] *= alpha;
                }
            }
        if (SPLITKV) {
            if (j + 1 < n_tiles) load_tile<THREADS>(sV + (buf ^ 1) * kBK * kRowBytes, V, p, bt, kvh, (j + 1) * kBK, kv_end);
            cp_async_commit();
            cp_async_wait<2>(); /* V(j) landed */
            __syncthreads();
        }
        /* O += P V: P (16 x 64 per m-tile) from the S accumulators, V via ldmatrix.trans */
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            uint32_t pa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                pa[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                pa[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                pa[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                pa[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
#pragma unroll
            for (int dp = 0; dp < 8; ++dp) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4_trans(vb + swz(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3), dp * 2 + (lane >> 4)), b0, b1, b2, b3);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_bf16(acc[mt][2 * dp], pa[mt], b0, b1);
                    mma_bf16(acc[mt][2 * dp + 1], pa[mt], b2, b3);
                }
            }
        }
        if (!SPLITKV) __syncthreads(); /* buffer buf is refilled at iteration j + 1 */
    }
    cp_async_wait<0>();

    /* normalize and store bf16 */
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            float l = row_l[mt][hr];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row = wrow0 + mt * 16 + g + hr * 8;
            if (row < L) {
                uint16_t *orow = Out + ((size_t)(b * L + row) * p.num_heads + h) * kD;
#pragma unroll
                for (int dt = 0; dt < 16; ++dt) {
                    const uint32_t v = pack_bf16(acc[mt][dt][2 * hr] * inv, acc[mt][dt][2 * hr + 1] * inv);
                    *reinterpret_cast<uint32_t *>(orow + dt * 8 + 2 * t4) = v;
                }
            }
        }
}

template <int WARPS, int MT, bool SPLITKV> int launch(const pl_attn_params *p, cudaStream_t stream) {
    constexpr int BQ = WARPS * 16 * MT;
    const int smem = BQ * kRowBytes + 4 * kBK * kRowBytes;
    cudaError_t e = cudaFuncSetAttribute(mma_attention_kernel<WARPS, MT, SPLITKV>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return (int)e;
    dim3 grid((unsigned)((p->query_len + BQ - 1) / BQ), (unsigned)p->num_heads, (unsigned)p->batch);
    e = launch_pdl(mma_attention_kernel<WARPS, MT, SPLITKV>, grid, dim3(WARPS * 32), smem, stream, p->pdl, *p);
    return (int)(e != cudaSuccess ? e : cudaGetLastError());
}

} // namespace

extern "C" int pl_cuda_attn_mma_launch(const pl_attn_params *p, int shape, cudaStream_t stream, char *err, size_t err_len) {
    /* shape: 4 = 4 warps x 16 rows, 8 = 8 warps x 16 rows, 32 = 4 warps x 32 rows; + 100:
     * K and V waited on separately (V(j) loads while S = Q K(j)^T runs) */
    int e;
    switch (shape) {
    case 8: e = launch<8, 1, false>(p, stream); break;
    case 108: e = launch<8, 1, true>(p, stream); break;
    case 32: e = launch<4, 2, false>(p, stream); break;
    case 132: e = launch<4, 2, true>(p, stream); break;
    case 104: e = launch<4, 1, true>(p, stream); break;
    default: e = launch<4, 1, false>(p, stream); break;
    }
    if (e != 0) return pl_fail(err, err_len, PL_ERR_CUDA, "mma attention kernel launch: %s", cudaGetErrorString((cudaError_t)e));
    return PL_OK;
}
