/* Experiment (twelfth session): at 33-64 token rows, is the tile GEMM held back by the bytes
 * its ring keeps in flight? Each 24 KiB stage of the backend's kernel is 16 KiB of weights and
 * 8 KiB of x (64 tokens x 64 k), four stages in 97 KiB so that the next kernel's CTAs fit
 * beside it (PDL); three stages in flight give 48 KiB of weights per SM. Little's law at
 * ~4.3 TB/s and ~2 us of loaded latency asks for ~64 KiB.
 *
 * Variants, all TMA + wgmma on sm_90a, K split as the backend does (the splits of a tile one
 * cluster, partials added through distributed shared memory), in a chain of launches with PDL
 * (trigger at the top, weight stages issued before the wait), captured as one CUDA graph:
 *   ref    the backend's kernel (pl_cuda_gemv_bf16, PL_CUDA_GEMV_TILE);
 *   wx<S>  the same structure re-written here with S stages of weights + x (S = 4 is the
 *          backend's; 5-8 no longer leave room for a second such CTA per SM);
 *   xr<S>  (removed in the twenty-eighth session for xd below; in git history up to ccb8582)
 *          one warpgroup, x in registers (wgmma with A = 64 token rows from registers,
 *          B = 128 weight rows from shared memory), a ring of S weight-only stages: 6 stages
 *          still fit in 97 KiB, so 80 KiB of weights are in flight beside a second CTA;
 *   mixes  deeper rings for the long projections (qkv, gate_up) only, the backend's (or wx4)
 *          for the split ones (o, down); "carveout max": every kernel asks for the 228 KiB
 *          shared-memory split, so a 121 KiB CTA leaves room for a 97 KiB one; "device
 *          PreferShared": the same through cudaDeviceSetCacheConfig.
 *   --splits  only the backend's kernel with other K splits for some projections (two CTAs per
 *          SM, at most 2-4 splits for qkv or for o and down), at 64 down to 4 rows.
 * Workloads at M = 64, 48, 32 rows (--splits: also 16, 8, 4): 36 layers of Qwen3-4B's four
 * projections (distinct weights, 7.27 GB), and 36 of one projection in a row. Each variant's output of one GEMM is
 * checked against the backend's (max |diff| / max |ref|).
 *
 * Measured (PERF.md, twelfth session; runs 1-3): x in registers is 2-3x slower; deeper rings
 * speed up qkv (-13%) and gate_up (-10% at 8 stages) in chains of their own, slow o (+40%) and
 * down (+15-20%), and every mix loses 7-14% in the layer chain against the backend's kernel,
 * with or without the largest carveout. The 97 KiB four-stage ring stays. --splits (run 8):
 * at 32 rows, where a tile's splits add in a cluster, 3 splits for qkv and at most 4 for o and
 * down made the layer chain 11.6% faster; in the step one CTA per SM past 16 rows won 2.6-3.7%
 * and became the default. At 48-64 and at 16 rows and below nothing beat the default.
 *
 * --xd and --mix (twenty-eighth session, runs 4-5): x in registers loaded 3-4 stages ahead
 * (xd_kernel, weight-only rings of 5-7 stages) is still about twice as slow, outputs bitwise
 * the backend's; 5-stage rings for o and down only (mix F, G), beside 4-stage qkv and gate_up,
 * lose 21% in the layer chain with or without the largest carveout.
 *
 * Not part of the build. On a GPU machine, after the CMake build in build-gpu:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda \
 *       bench/cuda/exp_tile_xreg.cu build-gpu/libpagellm.a -o exp_tile_xreg
 *   ./exp_tile_xreg [--splits | --xd | --mix]
 */
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/gemv_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/tma_cuda.h"
#include "exp_util.cuh"
#include "exp_chain.cuh"

namespace {

constexpr int TBM = 128, TBK = 64, WBYTES = TBM * TBK * 2, XBYTES = 64 * TBK * 2;

__device__ __forceinline__ void st_out(__nv_bfloat16 *y, int M, int N, int tok, int row, float v) {
    if (tok < M && row < N) y[(size_t)tok * N + row] = __float2bfloat16_rn(v);
}

/* this CTA's 64-k tiles [kt0, kt0 + nkt): split blockIdx.y of gridDim.y, as the backend */
__device__ __forceinline__ void split_range(int K, int &kt0, int &nkt) {
    const int KT = (K + TBK - 1) / TBK, split = blockIdx.y, ks = gridDim.y;
    kt0 = (int)((long long)KT * split / ks);
    nkt = (int)((long long)KT * (split + 1) / ks) - kt0;
}

/* thread 0: the tensor maps fetched, one barrier per ring stage; then the whole CTA waits */
__device__ __forceinline__ void ring_init(uint32_t bars, int stages, const void *tw, const void *tx) {
    if (threadIdx.x == 0) {
        tmap_prefetch(tw);
        if (tx) tmap_prefetch(tx);
        for (int j = 0; j < stages; ++j) mbar_init(bars + j * 8, 1);
        mbar_init_fence();
    }
    __syncthreads();
}

/* The K splits of a tile are one cluster: each CTA leaves its NT accumulator fragments
 * (float4 per thread) in its shared memory at `mine`, and rank r adds fragments r, r + ks, ...
 * of all ranks in rank order and hands each sum to store(j, sum). */
template <int NT, typename Store>
__device__ __forceinline__ void cluster_sum(const float (&acc)[NT][4], float4 *mine, int ks, Store store) {
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    const int tid = threadIdx.x, nth = blockDim.x;
    __syncthreads(); /* every warp is done with the ring */
#pragma unroll
    for (int j = 0; j < NT; ++j) mine[j * nth + tid] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
    cl.sync();
    for (int j = (int)cl.block_rank(); j < NT; j += ks) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int r = 0; r < ks; ++r) {
            const float4 q = *cl.map_shared_rank(mine + j * nth + tid, r);
            v.x += q.x, v.y += q.y, v.z += q.z, v.w += q.w;
        }
        store(j, v);
    }
    cl.sync(); /* the others are done reading our partial */
}

#ifdef PL_HAVE_WGMMA
/* D[64 tokens x 128 weight rows] += A (registers: x) B (shared: W, K-major, 128-byte swizzle) */
__device__ __forceinline__ void wgmma_rs_n128(float (&c)[16][4], const uint32_t (&a)[4], uint64_t db) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63},"
        " {%64,%65,%66,%67}, %68, 1, 1, 1, 0;\n"
        : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]),
          "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]),
          "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]),
          "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]),
          "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]),
          "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]),
          "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]),
          "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}
#endif

/* the A fragments of one 64-k stage: warp w holds token rows 16w + g and 16w + g + 8, k pairs
 * 2t and 2t + 8 of each k16 step (zero past M and K) */
__device__ __forceinline__ void load_xa(uint32_t (&r)[4][4], const __nv_bfloat16 *x, int M, int K, int kt, int warp, int lane) {
    const int g = lane >> 2, t = lane & 3, r0 = warp * 16 + g, r1 = r0 + 8;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        const int k = kt * TBK + kk * 16 + 2 * t;
        const uint32_t *p0 = reinterpret_cast<const uint32_t *>(x + (size_t)r0 * K + k);
        const uint32_t *p1 = reinterpret_cast<const uint32_t *>(x + (size_t)r1 * K + k);
        r[kk][0] = r0 < M && k < K ? __ldcg(p0) : 0u;
        r[kk][1] = r1 < M && k < K ? __ldcg(p1) : 0u;
        r[kk][2] = r0 < M && k + 8 < K ? __ldcg(p0 + 4) : 0u;
        r[kk][3] = r1 < M && k + 8 < K ? __ldcg(p1 + 4) : 0u;
    }
}

/* the end of the x-in-registers kernels: fragment j holds tokens 16w + g (+8) and weight rows
 * 8j + 2t (+1); the K splits of a tile add in their cluster through `ring` */
__device__ __forceinline__ void xreg_store(const float (&acc)[16][4], __nv_bfloat16 *y, int M, int N, int n0, float4 *ring) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3, ks = gridDim.y;
    auto store = [&](int j, float4 v) {
        const int row = n0 + 8 * j + 2 * t, tok = warp * 16 + g;
        st_out(y, M, N, tok, row, v.x), st_out(y, M, N, tok, row + 1, v.y);
        st_out(y, M, N, tok + 8, row, v.z), st_out(y, M, N, tok + 8, row + 1, v.w);
    };
    if (ks > 1) {
        cluster_sum(acc, ring, ks, store);
        return;
    }
#pragma unroll
    for (int j = 0; j < 16; ++j) store(j, make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
}

/* the backend's TMA + wgmma tile kernel at 64 token rows, S stages of weights + x */
template <int S>
__global__ void __launch_bounds__(256) wx_kernel(int M, int N, int K, __nv_bfloat16 *__restrict__ y, const __grid_constant__ CUtensorMap tw,
                                                 const __grid_constant__ CUtensorMap tx) {
#ifdef PL_HAVE_WGMMA
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char sm[];
    constexpr int STG = WBYTES + XBYTES;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, ks = gridDim.y, n0 = blockIdx.x * TBM;
    int kt0, nkt;
    split_range(K, kt0, nkt);
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, bars = sb + S * STG;
    ring_init(bars, S, &tw, &tx);
    auto tma_w = [&](int st, int kt) {
        mbar_expect_tx(bars + st * 8, STG);
        tma_load_2d(sb + st * STG, &tw, kt * TBK, n0, bars + st * 8);
    };
    auto tma_x = [&](int st, int kt) { tma_load_2d(sb + st * STG + WBYTES, &tx, kt * TBK, 0, bars + st * 8); };
    if (tid == 0)
        for (int j = 0; j < S - 1; ++j)
            if (j < nkt) tma_w(j, kt0 + j);
    pdl_wait();
    if (tid == 0)
        for (int j = 0; j < S - 1; ++j)
            if (j < nkt) tma_x(j, kt0 + j);
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    for (int i = 0; i < nkt; ++i) {
        mbar_wait(bars + (i % S) * 8, (unsigned)(i / S) & 1u);
        __syncthreads();
        if (tid == 0 && i + S - 1 < nkt) {
            tma_w((i + S - 1) % S, kt0 + i + S - 1);
            tma_x((i + S - 1) % S, kt0 + i + S - 1);
        }
        const uint32_t wsm = sb + (i % S) * STG;
        const uint64_t da = wgmma_desc_sw128(wsm + (warp >> 2) * 64 * 128), db = wgmma_desc_sw128(wsm + WBYTES);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_bf16<64>(acc, da + 2 * kk, db + 2 * kk);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(acc);
    }
    const int g = lane >> 2, t = lane & 3;
    auto store = [&](int nt, float4 v) { /* fragment nt: weight rows 16w + g (+8), tokens 8nt + 2t (+1) */
        const int row = n0 + warp * 16 + g, tok = nt * 8 + 2 * t;
        st_out(y, M, N, tok, row, v.x), st_out(y, M, N, tok + 1, row, v.y);
        st_out(y, M, N, tok, row + 8, v.z), st_out(y, M, N, tok + 1, row + 8, v.w);
    };
    if (ks > 1) {
        cluster_sum(acc, reinterpret_cast<float4 *>(sm + (sb - smem_u32(sm))), ks, store);
        return;
    }
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) store(nt, make_float4(acc[nt][0], acc[nt][1], acc[nt][2], acc[nt][3]));
#endif
}

/* Twenty-eighth session: x in registers again, with its loads D stages ahead (the twelfth
 * session's xr kernel loaded them one stage ahead and waited on L2 every stage), and the ring
 * of S weight-only stages refilled as soon as a stage is computed (the backend's order), with
 * the backend's L2 evict_first policy. A 97 KiB CTA (S = 6) keeps 80-96 KiB of weights in
 * flight where the backend's 4 stages of weights + x keep 48-64. One warpgroup: m64n128k16
 * with A = 64 token rows from registers, B = 128 weight rows from the ring. */
template <int S, int D>
__global__ void __launch_bounds__(128, 1) xd_kernel(const __nv_bfloat16 *__restrict__ x, int M, int N, int K, __nv_bfloat16 *__restrict__ y,
                                                    const __grid_constant__ CUtensorMap tw) {
#ifdef PL_HAVE_WGMMA
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, n0 = blockIdx.x * TBM;
    int kt0, nkt;
    split_range(K, kt0, nkt);
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, bars = sb + S * WBYTES;
    ring_init(bars, S, &tw, nullptr);
    const uint64_t wpol = l2_evict_first();
    auto tma_w = [&](int st, int kt) {
        mbar_expect_tx(bars + st * 8, WBYTES);
        tma_load_2d(sb + st * WBYTES, &tw, kt * TBK, n0, bars + st * 8, wpol);
    };
    if (tid == 0)
        for (int j = 0; j < S - 1; ++j)
            if (j < nkt) tma_w(j, kt0 + j);
    pdl_wait();
    if (tid == 0 && S - 1 < nkt) tma_w(S - 1, kt0 + S - 1);
    uint32_t xr[D][4][4];
#pragma unroll
    for (int d = 0; d < D; ++d)
        if (d < nkt) load_xa(xr[d], x, M, K, kt0 + d, warp, lane);
    float acc[16][4];
#pragma unroll
    for (int j = 0; j < 16; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    for (int i = 0; i < nkt; i += D) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const int ii = i + d;
            if (ii < nkt) {
                mbar_wait(bars + (ii % S) * 8, (unsigned)(ii / S) & 1u);
                const uint64_t db = wgmma_desc_sw128(sb + (ii % S) * WBYTES);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk) wgmma_rs_n128(acc, xr[d][kk], db + 2 * kk);
                wgmma_commit();
                wgmma_wait<0>();
                wgmma_fence_operands(acc);
                if (ii + D < nkt) load_xa(xr[d], x, M, K, kt0 + ii + D, warp, lane);
                __syncthreads(); /* every warp is done with stage ii: refill its slot */
                if (tid == 0 && ii + S < nkt) tma_w(ii % S, kt0 + ii + S);
            }
        }
    }
    xreg_store(acc, y, M, N, n0, reinterpret_cast<float4 *>(sm + (sb - smem_u32(sm))));
#endif
}

struct gemm {
    const __nv_bfloat16 *w, *x;
    __nv_bfloat16 *y;
    int n, k;
    CUtensorMap tw, tx;
};

enum { V_REF, V_WX4, V_WX5, V_WX6, V_WX8, V_MIXA, V_MIXD, V_MIXE, V_REFPS, V_WX4C, V_MIXAC, V_MIXDC, V_MIXEC,
       V_KQ3, V_KQ5, V_KOD8, V_KALL2, V_KOD4, V_KQ3OD4, V_KOD2, V_XD64, V_XD54, V_XD63, V_XD74, V_MIXF, V_MIXFC, V_MIXG, V_MIXGC, NV };
const char *vname[NV] = {"ref (backend)", "wx4 (backend's, here)", "wx5", "wx6", "wx8",
                         "mix: gu wx8, qkv wx6", "mix: gu wx5, qkv wx5", "mix: gu wx8, qkv wx5", "ref, device PreferShared",
                         "wx4, carveout max", "mix A, carveout max", "mix D, carveout max", "mix E, carveout max",
                         "ref, qkv 3 splits", "ref, qkv 2 CTAs/SM", "ref, o + down 2 CTAs/SM", "ref, 2 CTAs/SM for all",
                         "ref, o + down <= 4 splits", "ref, qkv 3, o + down <= 4", "ref, o + down <= 2 splits",
                         "xd: 6 w stages, x 4 ahead", "xd: 5 w stages, x 4 ahead", "xd: 6 w stages, x 3 ahead",
                         "xd: 7 w stages, x 4 ahead", "mix F: o + down wx5", "mix F, carveout max",
                         "mix G: o + down wx5, rest wx4", "mix G, carveout max"};
/* carve (the variants past V_REFPS): the kernel asks for the largest shared-memory carveout
 * (228 KiB), so a 121 KiB CTA leaves room for a 97 KiB one; mixes use wx4 for o and down there */
template <typename K, typename... A>
void launch(K kern, const gemm &g, int ks, size_t smem, int threads, bool carve, cudaStream_t s, A... args) {
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout, carve ? (int)cudaSharedmemCarveoutMaxShared : -1));
    CK(launch_pdl_cluster(kern, dim3((unsigned)((g.n + TBM - 1) / TBM), (unsigned)ks), dim3(threads), smem, s, 1, ks > 1 ? (unsigned)ks : 1u,
                          args...));
}

void run_variant(int v, const gemm &g, int M, pl_cuda_gemv_ws *ws, cudaStream_t s) {
    /* mixes: deeper rings for the long projections (qkv, gate_up: K = hidden), the backend's
     * kernel for the short split ones (o, down) */
    const bool qkv = g.n == 6144, gu = g.n > 6144;
    const bool carve = (v > V_REFPS && v < V_KQ3) || v == V_MIXFC || v == V_MIXGC;
    /* twenty-eighth session: deeper rings (121 KiB) only for the split o and down, so that
     * every projection's CTA still fits beside the next one's (121 + 97 KiB) */
    if (v == V_MIXF || v == V_MIXFC) v = !qkv && !gu ? V_WX5 : V_REF;
    if (v == V_MIXG || v == V_MIXGC) v = !qkv && !gu ? V_WX5 : V_WX4;
    if (v == V_REFPS) v = V_REF;
    if (v == V_WX4C) v = V_WX4;
    if (v == V_MIXAC) v = gu ? V_WX8 : qkv ? V_WX6 : V_WX4;
    if (v == V_MIXDC) v = gu || qkv ? V_WX5 : V_WX4;
    if (v == V_MIXEC) v = gu ? V_WX8 : qkv ? V_WX5 : V_WX4;
    if (v == V_MIXA) v = gu ? V_WX8 : qkv ? V_WX6 : V_REF;
    if (v == V_MIXD) v = gu || qkv ? V_WX5 : V_REF;
    if (v == V_MIXE) v = gu ? V_WX8 : qkv ? V_WX5 : V_REF;
    if (v >= V_KQ3 && v < V_XD64) { /* the backend's kernel with other K splits for some projections */
        pl_cuda_gemv_ws w2 = *ws;
        const bool od = !qkv && !gu;
        if ((v == V_KQ3 || v == V_KQ5 || v == V_KQ3OD4) && qkv) w2.tile_ctas_per_sm = 2, w2.tile_max_splits = v == V_KQ5 ? 0 : 3;
        if ((v == V_KOD8 && od) || v == V_KALL2) w2.tile_ctas_per_sm = 2;
        if ((v == V_KOD4 || v == V_KQ3OD4 || v == V_KOD2) && od) w2.tile_ctas_per_sm = 2, w2.tile_max_splits = v == V_KOD2 ? 2 : 4;
        CK((cudaError_t)pl_cuda_gemv_bf16(g.w, g.x, M, g.n, g.k, g.y, 0, PL_CUDA_GEMV_TILE, &w2, s));
        return;
    }
    int ks = pl_cuda_gemv_tile_splits(g.n, g.k, M, ws);
    if (ks > 8) ks = 8;
    switch (v) {
    case V_REF: CK((cudaError_t)pl_cuda_gemv_bf16(g.w, g.x, M, g.n, g.k, g.y, 0, PL_CUDA_GEMV_TILE, ws, s)); break;
    case V_WX4: launch(wx_kernel<4>, g, ks, 4 * (WBYTES + XBYTES) + 1024 + 64, 256, carve, s, M, g.n, g.k, g.y, g.tw, g.tx); break;
    case V_WX5: launch(wx_kernel<5>, g, ks, 5 * (WBYTES + XBYTES) + 1024 + 64, 256, carve, s, M, g.n, g.k, g.y, g.tw, g.tx); break;
    case V_WX6: launch(wx_kernel<6>, g, ks, 6 * (WBYTES + XBYTES) + 1024 + 64, 256, carve, s, M, g.n, g.k, g.y, g.tw, g.tx); break;
    case V_WX8: launch(wx_kernel<8>, g, ks, 8 * (WBYTES + XBYTES) + 1024 + 64, 256, carve, s, M, g.n, g.k, g.y, g.tw, g.tx); break;
    case V_XD64: launch(xd_kernel<6, 4>, g, ks, 6 * WBYTES + 1024 + 64, 128, carve, s, g.x, M, g.n, g.k, g.y, g.tw); break;
    case V_XD54: launch(xd_kernel<5, 4>, g, ks, 5 * WBYTES + 1024 + 64, 128, carve, s, g.x, M, g.n, g.k, g.y, g.tw); break;
    case V_XD63: launch(xd_kernel<6, 3>, g, ks, 6 * WBYTES + 1024 + 64, 128, carve, s, g.x, M, g.n, g.k, g.y, g.tw); break;
    case V_XD74: launch(xd_kernel<7, 4>, g, ks, 7 * WBYTES + 1024 + 64, 128, carve, s, g.x, M, g.n, g.k, g.y, g.tw); break;
    }
}

} // namespace

int main(int argc, char **argv) {
    /* --splits: only the backend's kernel and its split variants (the other rows were measured
     * in the twelfth session's runs 1-3) */
    const bool only_splits = argc > 1 && !strcmp(argv[1], "--splits");
    /* --xd: only the backend's kernel and the twenty-eighth session's xd variants, 64-32 rows */
    const bool only_xd = argc > 1 && !strcmp(argv[1], "--xd");
    /* --mix: only the backend's kernel and the twenty-eighth session's o + down mixes, 64-32 rows */
    const bool only_mix = argc > 1 && !strcmp(argv[1], "--mix");
    cudaStream_t s;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    const int L = 36, H = 2560, Q = 6144, A = 4096, I = 9728;
    struct shp { const char *name; int n, k, xin; } shapes[4] = {{"qkv", Q, H, 0}, {"o", H, A, 1}, {"gate_up", 2 * I, H, 0}, {"down", H, I, 2}};
    /* weights: 36 layers x 4 projections, distinct */
    std::vector<__nv_bfloat16 *> W(4 * L);
    double wbytes = 0;
    for (int l = 0; l < L; l++)
        for (int p = 0; p < 4; p++) {
            const size_t n = (size_t)shapes[p].n * shapes[p].k;
            CK(cudaMalloc(&W[l * 4 + p], n * 2));
            fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(W[l * 4 + p]), n / 2, (uint32_t)(l * 4 + p + 1));
            wbytes += n * 2.0;
        }
    __nv_bfloat16 *xin[3], *yout[4];
    const int xk[3] = {H, A, I};
    for (int i = 0; i < 3; i++) {
        CK(cudaMalloc(&xin[i], (size_t)64 * xk[i] * 2));
        fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(xin[i]), (size_t)64 * xk[i] / 2, 1000u + i);
    }
    for (int p = 0; p < 4; p++) CK(cudaMalloc(&yout[p], (size_t)64 * shapes[p].n * 2));
    __nv_bfloat16 *yref;
    CK(cudaMalloc(&yref, (size_t)64 * Q * 2));
    const int nk[4][2] = {{Q, H}, {H, A}, {2 * I, H}, {H, I}};
    pl_cuda_gemv_ws ws = chain_ws(sms, nk, 4, (size_t)64 << 20); /* room for the other split counts */
    CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int Ms[6] = {64, 48, 32, 16, 8, 4};
    for (int mi = 0; mi < (only_splits ? 6 : 3); mi++) {
        const int M = Ms[mi];
        std::vector<gemm> G(4 * L);
        for (int l = 0; l < L; l++)
            for (int p = 0; p < 4; p++) {
                gemm &g = G[l * 4 + p];
                g.w = W[l * 4 + p], g.x = xin[shapes[p].xin], g.y = yout[p], g.n = shapes[p].n, g.k = shapes[p].k;
                /* the x map only for the wx kernels (past 32 rows) */
                if (!pl_cuda_tmap_2d_bf16(&g.tw, g.w, (uint64_t)g.k, (uint64_t)g.n, (uint64_t)g.k * 2, TBK, TBM) ||
                    (!pl_cuda_tmap_2d_bf16(&g.tx, g.x, (uint64_t)g.k, (uint64_t)M, (uint64_t)g.k * 2, TBK, 64) && M > 32)) {
                    fprintf(stderr, "tensor map refused\n");
                    return 1;
                }
            }
        printf("\nM = %d rows; splits: qkv %d, o %d, gate_up %d, down %d\n", M, pl_cuda_gemv_tile_splits(Q, H, M, &ws),
               pl_cuda_gemv_tile_splits(H, A, M, &ws), pl_cuda_gemv_tile_splits(2 * I, H, M, &ws), pl_cuda_gemv_tile_splits(H, I, M, &ws));
        /* check: qkv of layer 0, each variant against the backend */
        run_variant(V_REF, G[0], M, &ws, s);
        CK(cudaMemcpyAsync(yref, yout[0], (size_t)M * Q * 2, cudaMemcpyDeviceToDevice, s));
        std::vector<uint16_t> hr((size_t)M * Q), hv((size_t)M * Q);
        CK(cudaMemcpyAsync(hr.data(), yref, hr.size() * 2, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        auto tof = [](uint16_t b) {
            uint32_t u = (uint32_t)b << 16;
            float f;
            memcpy(&f, &u, 4);
            return f;
        };
        float mref = 0;
        for (uint16_t b : hr) mref = fmaxf(mref, fabsf(tof(b)));
        bool skip[NV] = {};
        for (int v = 1; v < NV; v++) {
            skip[v] = (M <= 32 && v != V_REF && v != V_REFPS && v < V_KQ3) ||
                      (only_splits && v != V_REF && v < V_KQ3) || (only_splits && v >= V_XD64) ||
                      (only_xd && v != V_REF && (v < V_XD64 || v > V_XD74)) || (!only_xd && v >= V_XD64 && v <= V_XD74) ||
                      (only_mix && v != V_REF && v < V_MIXF) || (!only_mix && v >= V_MIXF) ||
                      (M <= 32 && v >= V_MIXF); /* the wx kernels' x map is 64 rows */
            if (skip[v]) continue;
            CK(cudaMemsetAsync(yout[0], 0xff, (size_t)64 * Q * 2, s));
            run_variant(v, G[0], M, &ws, s);
            CK(cudaMemcpyAsync(hv.data(), yout[0], hv.size() * 2, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            float md = 0;
            for (size_t i = 0; i < hv.size(); i++) md = fmaxf(md, fabsf(tof(hv[i]) - tof(hr[i])));
            if (!(md <= 1e-2f * mref)) md = INFINITY;
            printf("check %-22s max|diff| / max|ref| = %.2e%s\n", vname[v], md / mref, md == INFINITY ? "  FAILED" : "");
        }
        /* timing: graphs of the chain (4 projections x 36 layers) and of 36 of one projection */
        const char *wl[5] = {"layers", "qkv", "o", "gate_up", "down"};
        printf("%-24s", "us per run (TB/s)");
        for (int w = 0; w < 5; w++) printf(" %16s", wl[w]);
        printf("\n");
        for (int v = 0; v < NV; v++) {
            if (skip[v]) continue;
            printf("%-24s", vname[v]);
            CK(cudaDeviceSetCacheConfig(v == V_REFPS ? cudaFuncCachePreferShared : cudaFuncCachePreferNone));
            for (int w = 0; w < 5; w++) {
                double bytes = 0;
                cudaGraph_t gr;
                cudaGraphExec_t ge;
                CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
                for (int l = 0; l < L; l++)
                    for (int p = 0; p < 4; p++)
                        if (w == 0 || p == w - 1) {
                            run_variant(v, G[l * 4 + p], M, &ws, s);
                            bytes += (double)G[l * 4 + p].n * G[l * 4 + p].k * 2;
                        }
                CK(cudaStreamEndCapture(s, &gr));
                CK(cudaGraphInstantiate(&ge, gr, 0));
                std::vector<float> t;
                for (int r = 0; r < 7; r++) t.push_back(time_runs(s, e0, e1, 1, [&] { CK(cudaGraphLaunch(ge, s)); }));
                const float ms = median(t);
                printf(" %8.1f (%5.2f)", ms * 1e3, bytes / (ms * 1e-3) / 1e12);
                CK(cudaGraphExecDestroy(ge));
                CK(cudaGraphDestroy(gr));
            }
            printf("\n");
        }
    }
    printf("\nweights %.2f GB; chain ideal at the copy rate %.1f us\n", wbytes / 1e9, wbytes / (copy * 1e9) * 1e6);
    return 0;
}
