/* Split-context decode on tensor cores for bf16, head_dim 128: the GQA group's query rows
 * (rows r = l * group + g of one KV head, up to 16) are packed into the 16 rows of one
 * m16n8k16 tile, so each K/V byte is read once per KV head and the dot products cost ~6
 * instructions per key instead of ~80 on CUDA cores.
 *
 * A CTA of 4 warps (8 when there are no more units than SMs) owns one KV head, one 16-row
 * chunk and one context split. Each warp walks its own 16-key tiles (tiles w, w + NW, ...)
 * through a private 3-stage ring (8 KiB per stage: K and V rows, 16-byte chunks
 * XOR-swizzled for ldmatrix), so warps never wait on each other until the final merge of
 * their (max, sum, out) states. A stage is filled either by 32 cp.async of 16 bytes per lane,
 * or, when page_size % 16 == 0, by four TMA boxes (a tensor map over the page pool, 128-byte
 * swizzle) that one lane issues and an mbarrier counts. Measured on the H200: TMA 0-1.8%
 * faster on long ranges (16x32768, 64x8192), 3-6% slower for 8-warp CTAs on short ranges
 * (1x8192, 8x4096), so the plan picks cp.async there. When the caller promises that the keys
 * before this step's query_len new ones are final (early_kv: the backend's page pools), each
 * warp's first stages of them go out before the PDL wait, while the kernel before (the RoPE
 * and K/V append) still runs: measured 0.6-2.9% off decode steps of batch 1-64 in the step. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cuda/attn_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/tma_cuda.h"

namespace {

constexpr int kD = 128, kRowB = 256, kTK = 16, kStages = 3, kRows = 16;
constexpr int kStageBytes = 2 * kTK * kRowB;                  /* K + V: 8 KiB */
constexpr int kWarpRing = kStages * kStageBytes;              /* 24 KiB */
constexpr int kQBytes = kRows * kRowB;                        /* 4 KiB */
/* NW warps per CTA: 4 (100 KiB, two CTAs per SM) or 8 (196 KiB, one CTA per SM: for few
 * long (row chunk, KV head, row) units, a unit's stream shared by twice the warps) */
template <int NW> constexpr int smem_bytes() { return kQBytes + NW * kWarpRing; }
/* TMA variant: the same plus 1 KiB to align the base for the 128-byte swizzle and the warps'
 * stage barriers */
template <int NW> constexpr int smem_bytes_tma() { return 1024 + smem_bytes<NW>() + NW * kStages * 8; }

/* TMA stage layout of a 16-key tile: head-dim halves [2][16 keys][128 bytes] in the 128-byte
 * swizzle (two boxes of 64 x 16), so ldmatrix rows of one 16-byte column hit distinct banks */
__device__ __forceinline__ uint32_t tswz(int r, int ch) {
    return (uint32_t)((ch >> 3) * 2048 + r * 128 + (((ch & 7) ^ (r & 7)) << 4));
}

__device__ __forceinline__ uint16_t to_bf16(float x) {
    uint32_t u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* TMA: each warp's tiles come as four 2 KiB tensor-map boxes (K and V, two head-dim halves)
 * issued by one lane and counted on a per-stage mbarrier, instead of 32 cp.async of 16 bytes
 * per lane; needs page_size % 16 == 0 (a tile never crosses a page). */
template <int NW, bool TMA>
__global__ void __launch_bounds__(NW * 32, NW == 4 ? 2 : 1)
    decode_mma_kernel(const __grid_constant__ pl_attn_params p, const __grid_constant__ CUtensorMap tk,
                      const __grid_constant__ CUtensorMap tv) {
    constexpr int kWarps = NW;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned char *smem = TMA ? smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u) : smem_raw;
    pdl_trigger(); /* the output projection after us may start loading its weights */
    if (TMA && threadIdx.x == 0) { /* the descriptors do not depend on the kernel before us */
        tmap_prefetch(&tk);
        tmap_prefetch(&tv);
    }
    /* p.early_kv: the block table, the context lengths and every key before this step's
     * query_len new ones were written before the kernel before us started (the caller's
     * promise), so those are read before pdl_wait; everything else after it */
    if (!p.early_kv) pdl_wait();
    const int split = blockIdx.x % p.splits;
    const int r0 = (blockIdx.x / p.splits) * kRows;
    const int kvh = blockIdx.y, b = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int G = p.group, L = p.query_len, R = G * L;
    const int ctx = p.context_lens[b];
    const uint16_t *Q = static_cast<const uint16_t *>(p.q);
    const uint16_t *K = static_cast<const uint16_t *>(p.k);
    const uint16_t *V = static_cast<const uint16_t *>(p.v);
    const int32_t *bt = p.block_table + (size_t)b * p.max_pages;
    const uint32_t sQ = smem_u32(smem);
    const uint32_t ring = sQ + kQBytes + warp * kWarpRing;
    const uint32_t bars = sQ + kQBytes + NW * kWarpRing + warp * kStages * 8; /* TMA: this warp's stage barriers */
    if (TMA) {
        if (lane < kStages) mbar_init(bars + lane * 8, 1);
        mbar_init_fence();
        __syncwarp();
    }

    /* visible range of this CTA's rows */
    int lmax = -1;
    {
        const int rlast = min(r0 + kRows, R) - 1;
        if (rlast >= r0) lmax = rlast / G;
    }
    int kv_end = ctx;
    if (p.causal && lmax >= 0) kv_end = min(ctx, lmax + ctx - L + 1);
    if (lmax < 0) kv_end = 0;
    const int k_begin = split * p.chunk;
    const int k_stop = min(k_begin + p.chunk, kv_end);
    const int ntile_all = k_stop > k_begin ? (k_stop - k_begin + kTK - 1) / kTK : 0;
    const int my_tiles = ntile_all > warp ? (ntile_all - warp + kWarps - 1) / kWarps : 0;

    /* each K/V byte is read once per step: let it leave L2 before the activations and
     * metadata around it (measured: 1x8192, 8x4096 and 128x1024 1-3% faster, the long
     * shapes within 0.3%) */
    const uint64_t once = l2_evict_first();
    const int ps = p.page_size;
    const bool one_lookup = (ps % kTK) == 0;
    auto issue = [&](int j) { /* j-th tile of this warp into stage j % kStages */
        const int t0 = k_begin + (warp + j * kWarps) * kTK;
        const uint32_t kb = ring + (j % kStages) * kStageBytes, vb = kb + kTK * kRowB;
        if (TMA) {
            if (lane == 0) {
                const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
                const int row = (__ldg(bt + pidx) * p.num_kv_heads + kvh) * ps + (t0 - pidx * ps);
                const uint32_t bar = bars + (j % kStages) * 8;
                mbar_expect_tx(bar, kStageBytes);
                tma_load_2d(kb, &tk, 0, row, bar, once);
                tma_load_2d(kb + 2048, &tk, 64, row, bar, once);
                tma_load_2d(vb, &tv, 0, row, bar, once);
                tma_load_2d(vb + 2048, &tv, 64, row, bar, once);
            }
            return;
        }
        int tpage = 0, tslot = 0;
        if (one_lookup) {
            const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
            tpage = __ldg(bt + pidx);
            tslot = t0 - pidx * ps;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int key = i * 2 + (lane >> 4), ch = lane & 15;
            const int s = t0 + key;
            const void *ks = K, *vs = V;
            int n = 0;
            if (s < k_stop) {
                int page, slot;
                if (one_lookup) {
                    page = tpage;
                    slot = tslot + key;
                } else {
                    const int pidx = p.page_shift >= 0 ? (s >> p.page_shift) : s / ps;
                    page = __ldg(bt + pidx);
                    slot = s - pidx * ps;
                }
                const size_t off = (((size_t)page * p.num_kv_heads + kvh) * ps + slot) * kD + ch * 8;
                ks = K + off;
                vs = V + off;
                n = 16;
            }
            cp_async16_hint(kb + swz(key, ch), ks, n, once);
            cp_async16_hint(vb + swz(key, ch), vs, n, once);
        }
    };
    /* the first stages, while they hold old keys only, go out before the wait (cp.async: one
     * group each, ahead of the Q group, which then waits for all of them) */
    int early = 0;
    if (p.early_kv) {
        while (early < kStages - 1 && early < my_tiles && k_begin + (warp + early * kWarps) * kTK + kTK <= ctx - L) {
            issue(early++);
            if (!TMA) cp_async_commit();
        }
        pdl_wait();
    }
    /* Q rows of this chunk (zero rows past R), 16 x 128 */
    for (int id = threadIdx.x; id < kRows * 16; id += NW * 32) {
        const int r = id >> 4, ch = id & 15, rr = r0 + r;
        const void *src = Q;
        int n = 0;
        if (rr < R) {
            const int l = rr / G, h = kvh * G + rr % G;
            src = Q + ((size_t)(b * L + l) * p.num_heads + h) * kD + ch * 8;
            n = 16;
        }
        cp_async16(sQ + swz(r, ch), src, n);
    }
    cp_async_commit();

#pragma unroll
    for (int j = early; j < kStages - 1; ++j) {
        if (j < my_tiles) issue(j);
        cp_async_commit();
    }

    const int g = lane >> 2, t4 = lane & 3;
    int lim[2];
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
        const int rr = r0 + g + hr * 8;
        lim[hr] = rr < R ? (p.causal ? rr / G + ctx - L : ctx - 1) : -1;
    }
    float acc[16][4];
#pragma unroll
    for (int i = 0; i < 16; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    float row_m[2] = {-INFINITY, -INFINITY}, row_l[2] = {0.f, 0.f};
    uint32_t qa[8][4];
    if (TMA || early) cp_async_wait<0>(); /* the Q group (TMA: the only cp.async one; early: behind the early stages) */
    else cp_async_wait<kStages - 1>();  /* the Q group */
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) ldmatrix_x4(sQ + swz(lane & 15, ks * 2 + (lane >> 4)), qa[ks][0], qa[ks][1], qa[ks][2], qa[ks][3]);

    for (int j = 0; j < my_tiles; ++j) {
        __syncwarp(); /* every lane is done reading the stage refilled now */
        if (j + kStages - 1 < my_tiles) issue(j + kStages - 1);
        const uint32_t kb = ring + (j % kStages) * kStageBytes, vb = kb + kTK * kRowB;
        const int t0 = k_begin + (warp + j * kWarps) * kTK;
        if (TMA) {
            mbar_wait(bars + (j % kStages) * 8, (unsigned)(j / kStages) & 1u);
            if (t0 + kTK > k_stop) { /* rows past the context hold stale data (maybe NaN): P x V needs zeros */
                for (int c = lane; c < kTK * 16; c += 32) {
                    const int r = c >> 4;
                    if (t0 + r >= k_stop) asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(vb + tswz(r, c & 15)), "r"(0) : "memory");
                }
                __syncwarp();
            }
        } else {
            cp_async_commit();
            cp_async_wait<kStages - 1>();
            __syncwarp();
        }
        float s[2][4];
#pragma unroll
        for (int i = 0; i < 2; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 8; ++ks) {
            uint32_t b0, b1, b2, b3;
            const int kr = (lane & 7) + ((lane >> 4) << 3), kc = ks * 2 + ((lane >> 3) & 1);
            ldmatrix_x4(kb + (TMA ? tswz(kr, kc) : swz(kr, kc)), b0, b1, b2, b3);
            mma_bf16(s[0], qa[ks], b0, b1);
            mma_bf16(s[1], qa[ks], b2, b3);
        }
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int key = t0 + nt * 8 + 2 * t4 + (e & 1);
                const float x = s[nt][e] * p.scale_log2;
                s[nt][e] = (key < k_stop && key <= lim[e >> 1]) ? x : -INFINITY;
            }
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            float mx = fmaxf(fmaxf(s[0][2 * hr], s[0][2 * hr + 1]), fmaxf(s[1][2 * hr], s[1][2 * hr + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float mnew = fmaxf(row_m[hr], mx);
            const float mb = mnew == -INFINITY ? 0.f : mnew;
            const float alpha = ex2(row_m[hr] - mb);
            row_m[hr] = mnew;
            float sum = 0.f;
#pragma unroll
            for (int nt = 0; nt < 2; ++nt) {
                s[nt][2 * hr] = ex2(s[nt][2 * hr] - mb);
                s[nt][2 * hr + 1] = ex2(s[nt][2 * hr + 1] - mb);
                sum += s[nt][2 * hr] + s[nt][2 * hr + 1];
            }
            row_l[hr] = row_l[hr] * alpha + sum;
#pragma unroll
            for (int dt = 0; dt < 16; ++dt) {
                acc[dt][2 * hr] *= alpha;
                acc[dt][2 * hr + 1] *= alpha;
            }
        }
        uint32_t pa[4];
        pa[0] = pack_bf16(s[0][0], s[0][1]);
        pa[1] = pack_bf16(s[0][2], s[0][3]);
        pa[2] = pack_bf16(s[1][0], s[1][1]);
        pa[3] = pack_bf16(s[1][2], s[1][3]);
#pragma unroll
        for (int dp = 0; dp < 8; ++dp) {
            uint32_t b0, b1, b2, b3;
            const int vr = (lane & 7) + (((lane >> 3) & 1) << 3), vc = dp * 2 + (lane >> 4);
            ldmatrix_x4_trans(vb + (TMA ? tswz(vr, vc) : swz(vr, vc)), b0, b1, b2, b3);
            mma_bf16(acc[2 * dp], pa, b0, b1);
            mma_bf16(acc[2 * dp + 1], pa, b2, b3);
        }
    }
    cp_async_wait<0>();
    __syncthreads(); /* rings are reused for the merge */

    /* merge the 4 warp states per row: [warp][row] (m, l) and [warp][row][128] out */
    float *sm_ml = reinterpret_cast<float *>(smem);
    float *sm_o = sm_ml + kWarps * kRows * 2;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
        float l = row_l[hr];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int r = g + hr * 8;
        if (t4 == 0) {
            sm_ml[(warp * kRows + r) * 2] = row_m[hr];
            sm_ml[(warp * kRows + r) * 2 + 1] = l;
        }
#pragma unroll
        for (int dt = 0; dt < 16; ++dt) {
            float *dst = sm_o + ((size_t)warp * kRows + r) * kD + dt * 8 + 2 * t4;
            dst[0] = acc[dt][2 * hr];
            dst[1] = acc[dt][2 * hr + 1];
        }
    }
    __syncthreads();
    uint16_t *Out = static_cast<uint16_t *>(p.out);
    for (int idx = threadIdx.x; idx < kRows * kD; idx += NW * 32) {
        const int r = idx / kD, d = idx % kD, rr = r0 + r;
        if (rr >= R) break;
        float M = -INFINITY;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) M = fmaxf(M, sm_ml[(w * kRows + r) * 2]);
        float lsum = 0.f, o = 0.f;
        if (M != -INFINITY) {
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                const float mw = sm_ml[(w * kRows + r) * 2];
                if (mw == -INFINITY) continue;
                const float wt = ex2(mw - M);
                lsum += wt * sm_ml[(w * kRows + r) * 2 + 1];
                o += wt * sm_o[((size_t)w * kRows + r) * kD + d];
            }
        }
        const int l = rr / G, h = kvh * G + rr % G;
        const size_t orow = (size_t)(b * L + l) * p.num_heads + h;
        if (p.splits == 1) {
            Out[orow * kD + d] = to_bf16(lsum > 0.f ? o / lsum : 0.f);
        } else {
            const size_t sl = orow * p.splits + split;
            p.part_o[sl * kD + d] = o;
            if (d == 0) {
                p.part_ml[sl * 2] = M;
                p.part_ml[sl * 2 + 1] = lsum;
            }
        }
    }
}

/* The 2D view of a page pool the TMA boxes index: rows of head_dim (256 bytes), row
 * (page * num_kv_heads + kv_head) * page_size + slot; boxes of 16 rows x 64 elements. */
bool encode_pool_map(CUtensorMap *m, const void *pool, const pl_attn_params *p) {
    const unsigned long long rows = (unsigned long long)p->num_pages * p->num_kv_heads * p->page_size;
    return pl_cuda_tmap_2d_bf16(m, pool, kD, rows, kRowB, 64, kTK) != 0;
}

template <int NW, bool TMA>
cudaError_t launch_decode(const pl_attn_params *p, dim3 grid, const CUtensorMap &tk, const CUtensorMap &tv, cudaStream_t stream) {
    const int smem = TMA ? smem_bytes_tma<NW>() : smem_bytes<NW>();
    cudaError_t e = cudaFuncSetAttribute(decode_mma_kernel<NW, TMA>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e == cudaSuccess) e = launch_pdl(decode_mma_kernel<NW, TMA>, grid, dim3(NW * 32), (size_t)smem, stream, p->pdl, *p, tk, tv);
    return e;
}

} // namespace

extern "C" int pl_cuda_attn_decode_mma_launch(const pl_attn_params *p, cudaStream_t stream, char *err, size_t err_len) {
    const int R = p->group * p->query_len;
    const int chunks = (R + kRows - 1) / kRows;
    const dim3 grid((unsigned)(p->splits * chunks), (unsigned)p->num_kv_heads, (unsigned)p->batch);
    CUtensorMap tk, tv;
    memset(&tk, 0, sizeof tk);
    memset(&tv, 0, sizeof tv);
    bool tma = p->decode_copy != 1 && p->page_size % kTK == 0;
    if (tma) tma = encode_pool_map(&tk, p->k, p) && encode_pool_map(&tv, p->v, p);
    if (!tma && p->decode_copy == 2)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "decode_copy: TMA copies need the driver's tensor-map encoder (none, or it refused a pool of %d pages)",
                       p->num_pages);
    cudaError_t e;
    if (p->wide_ctas) e = tma ? launch_decode<8, true>(p, grid, tk, tv, stream) : launch_decode<8, false>(p, grid, tk, tv, stream);
    else e = tma ? launch_decode<4, true>(p, grid, tk, tv, stream) : launch_decode<4, false>(p, grid, tk, tv, stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "decode mma kernel launch: %s", cudaGetErrorString(e));
    return pl_cuda_attn_merge_launch(p, PL_BF16, stream, err, err_len);
}
