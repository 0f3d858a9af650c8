/* Experiment (twenty-ninth session): a batch-64 MLP (gate/up, SwiGLU, down) as one kernel of
 * one CTA per SM whose weight ring runs on from gate/up into down.
 *
 * Why: at batch 64 the tile GEMM's 97 KiB CTAs keep 48-64 KiB of weights in flight each and
 * land two per SM on 63-87 SMs (PERF.md, twenty-eighth session); in a stamped step the MLP of a
 * layer takes ~54 us from gate/up's wait to down's last exit against 35.4 us of weight bytes
 * at the copy rate: gate/up's and down's ramps and tails and ~6.5 us of SwiGLU between them.
 * The twenty-eighth session's persistent chain (exp_persist64.cu) streamed at 0.95x of the
 * ideal with 128 KiB per SM in flight, but its K-split sums cost 0.2x and its step between
 * GEMMs ~7.5 us. This kernel needs neither for gate/up and one grid-wide count for the step:
 *
 * - 128 CTAs (one per SM), one consumer warpgroup and one producer lane. Roles swapped against
 *   the tile GEMM: A = the 64 token rows of x, B = a weight tile, wgmma m64nNk16.
 * - Phase 1: CTA c owns 152 rows of an interleaved gate/up weight (row 2i gate i, row 2i + 1 up
 *   i), all of K, so each thread's accumulator pairs are (gate, up) of one column and SwiGLU is
 *   its epilogue (the backend's roundings: bf16 g and u, bf16 silu, bf16 product): 128 x 152
 *   rows = 19456, no K split, no sums.
 * - Phase 2: down as 16 tiles of 160 rows x 8 K splits of 19 stages; each CTA stores its f32
 *   partial, and a small kernel adds the 8 in order (the stand-in for the add + RMSNorm that
 *   takes the tile GEMM's partials in the backend).
 * - Between them one count: each CTA's h stores, a fence, an atomic add; the producer loads
 *   down's x once the count reaches 128. Down's weights go into the ring as soon as slots free,
 *   so S x 20 KiB of them wait in shared memory while the count fills.
 *
 * Measured against the backend's gate/up tile GEMM + SwiGLU kernel + down tile GEMM (PDL, one
 * graph), 36 layers of distinct weights, with and without an o projection before each MLP.
 * Runs 1-6 of the twenty-ninth session (PERF.md): at 64 rows 45 against 50 us a layer for the
 * MLP alone, 54.9 against 58.3 with the o projection (1.27-1.28x against 1.41-1.45x of the
 * ideal); h bitwise the backend's; level at 32 rows. Rings of 6 weight + 6 x slots best (4 + 2
 * and 8 + 4 slower); the count between the phases costs ~0.3 us a layer (no-wait diagnostic);
 * per-stage flags (DEP 2) 2.5 us slower (the producer's polls serialize); the padded form (PAD,
 * the plain gate/up weight in two 76-row boxes) within 0.3 us of the interleaved one. Stamped:
 * each phase streams near the copy rate; the step between them (the SwiGLU epilogue, the count,
 * down's first x) takes ~6 us, half of it hidden by down's weights already in the ring. The
 * library kernel (src/cuda/mlp.cu) is the padded form with the count.
 *
 * Not part of the build. On a GPU machine, after the CMake build in build-gpu:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda \
 *       bench/cuda/exp_mlp64.cu build-gpu/libpagellm.a -o exp_mlp64
 *   ./exp_mlp64
 */
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

#ifdef PL_HAVE_WGMMA
template <> __device__ __forceinline__ void wgmma_bf16<152>(float (&c)[19][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n152k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75}, %76, %77, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3]), "+f"(c[16][0]), "+f"(c[16][1]), "+f"(c[16][2]), "+f"(c[16][3]), "+f"(c[17][0]), "+f"(c[17][1]), "+f"(c[17][2]), "+f"(c[17][3]), "+f"(c[18][0]), "+f"(c[18][1]), "+f"(c[18][2]), "+f"(c[18][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<160>(float (&c)[20][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79}, %80, %81, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3]), "+f"(c[16][0]), "+f"(c[16][1]), "+f"(c[16][2]), "+f"(c[16][3]), "+f"(c[17][0]), "+f"(c[17][1]), "+f"(c[17][2]), "+f"(c[17][3]), "+f"(c[18][0]), "+f"(c[18][1]), "+f"(c[18][2]), "+f"(c[18][3]), "+f"(c[19][0]), "+f"(c[19][1]), "+f"(c[19][2]), "+f"(c[19][3])
                 : "l"(da), "l"(db));
}
#endif


constexpr int M = 64, H = 2560, I = 9728, NGU = 2 * I, A = 4096;
constexpr int TG = 152, TD = 160, SPL = 8, CTAS = NGU / TG; /* 128 */
constexpr int KT1 = H / 64, KT2 = I / 64 / SPL;             /* 40 and 19 stages */
constexpr int WSLOT = TD * 128, XSLOT = M * 128;            /* 20 KiB, 8 KiB */
constexpr int NTH = 128 + 32;
static_assert(CTAS == (H / TD) * SPL, "phase 2 takes the same CTAs");



__device__ __forceinline__ float bfr(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

/* the backend's SwiGLU on the gate/up GEMM's bf16 outputs */
__device__ __forceinline__ __nv_bfloat16 swiglu1(float g, float u) {
    g = bfr(g), u = bfr(u);
    return __float2bfloat16_rn(bfr(g / (1.0f + expf(-g))) * u);
}

/* S weight slots (20 KiB), XS x slots (8 KiB). DEP: how down's x waits for h. 1: for the count of
 * CTAs that stored theirs to reach 128; 2: each 64-k stage for the flags of the one or two CTAs
 * whose 76 columns it holds; 0: not at all (a diagnostic: its results are wrong, its timing
 * shows what the wait costs). */
template <int S, int XS, int DEP, bool MMA = true, bool PAD = false>
__global__ void __launch_bounds__(NTH, 1)
    mlp_kernel(const __grid_constant__ CUtensorMap tw1, const __grid_constant__ CUtensorMap tx1, const __grid_constant__ CUtensorMap tw2,
               const __grid_constant__ CUtensorMap tx2, __nv_bfloat16 *__restrict__ h, float *__restrict__ part, int *cnt,
               unsigned long long *st) {
#ifdef PL_HAVE_WGMMA
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, c = blockIdx.x;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, xb = sb + S * WSLOT;
    const uint32_t full = xb + XS * XSLOT, empty = full + S * 8, xfull = empty + S * 8, xempty = xfull + XS * 8;
    constexpr int NQ = KT1 + KT2;
    /* st (stamps, or null): [CTA][8] globaltimer ns, see main */
    auto stamp = [&](int k) {
        if (st) st[c * 8 + k] = gtimer();
    };
    if (tid == 0) stamp(0);
    const int nt = c / SPL, sp = c % SPL; /* phase 2: 160-row tile, K split */
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, 128);
        for (int j = 0; j < XS; ++j) mbar_init(xfull + j * 8, 1), mbar_init(xempty + j * 8, 128);
        mbar_init_fence();
    }
    __syncthreads();
    if (warp == 4) { /* the producer */
        if (lane != 0) return;
        const uint64_t wpol = l2_evict_first();
        auto issue_w = [&](int q) {
            const uint32_t slot = sb + (q % S) * WSLOT, bar = full + (q % S) * 8;
            if (q < KT1 && PAD) { /* gate rows 76 c.. at tile rows 0-75, up rows at 80-155 */
                mbar_expect_tx(bar, TG * 128);
                tma_load_2d(slot, &tw1, q * 64, c * (TG / 2), bar, wpol);
                tma_load_2d(slot + TD / 2 * 128, &tw1, q * 64, I + c * (TG / 2), bar, wpol);
            } else if (q < KT1) {
                mbar_expect_tx(bar, TG * 128);
                tma_load_2d(slot, &tw1, q * 64, c * TG, bar, wpol);
            } else {
                mbar_expect_tx(bar, TD * 128);
                tma_load_2d(slot, &tw2, (sp * KT2 + q - KT1) * 64, nt * TD, bar, wpol);
            }
        };
        int nw = 0, nx = 0;
        for (; nw < S && nw < NQ; ++nw) issue_w(nw); /* the weights depend on nothing */
        pdl_wait();
        stamp(1);
        bool ready = !DEP;
        while (nx < NQ) {
            if (nw < NQ && mbar_test(empty + (nw % S) * 8, (unsigned)((nw / S - 1) & 1))) issue_w(nw++);
            if (nx < XS || mbar_test(xempty + (nx % XS) * 8, (unsigned)((nx / XS - 1) & 1))) {
                bool go = nx < KT1 || ready;
                if (!go) {
                    if (DEP == 1) {
                        go = ld_acquire(cnt) >= (int)gridDim.x;
                    } else { /* the one or two CTAs whose h columns this stage's 64 k are */
                        const int k0 = (sp * KT2 + nx - KT1) * 64;
                        go = ld_acquire(cnt + 64 + k0 / (TG / 2)) && ld_acquire(cnt + 64 + (k0 + 63) / (TG / 2));
                    }
                    if (go) {
                        if (nx == KT1) stamp(5);
                        asm volatile("fence.proxy.async.global;\n" ::: "memory"); /* h seen, before a TMA reads it */
                    }
                    ready = go && DEP == 1;
                }
                if (go) {
                    const uint32_t bar = xfull + (nx % XS) * 8;
                    mbar_expect_tx(bar, XSLOT);
                    if (nx < KT1) tma_load_2d(xb + (nx % XS) * XSLOT, &tx1, nx * 64, 0, bar);
                    else tma_load_2d(xb + (nx % XS) * XSLOT, &tx2, (sp * KT2 + nx - KT1) * 64, 0, bar);
                    ++nx;
                }
            }
        }
        while (nw < NQ) /* x all issued; the last weights */
            if (mbar_test(empty + (nw % S) * 8, (unsigned)((nw / S - 1) & 1))) issue_w(nw++);
        return;
    }
    pdl_wait();
    const int g8 = lane >> 2, t4 = lane & 3, tok0 = warp * 16 + g8, tok1 = tok0 + 8;
    auto consume = [&](int q, auto &acc) {
        mbar_wait(full + (q % S) * 8, (unsigned)((q / S) & 1));
        mbar_wait(xfull + (q % XS) * 8, (unsigned)((q / XS) & 1));
        if (tid == 0 && (q == 0 || q == KT1)) stamp(q ? 6 : 2);
        const uint64_t da = wgmma_desc_sw128(xb + (q % XS) * XSLOT), db = wgmma_desc_sw128(sb + (q % S) * WSLOT);
        if (MMA) {
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) wgmma_bf16<sizeof(acc) / 16 * 8>(acc, da + 2 * kk, db + 2 * kk);
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence_operands(acc);
        }
        mbar_arrive(empty + (q % S) * 8);
        mbar_arrive(xempty + (q % XS) * 8);
    };
    if (PAD) {
        /* 160 columns: gate 76 c + col at col < 76, its up at col + 80 (both in this thread's
         * fragments, 80 being a multiple of 8); columns 76-79 and 156-159 are stale rows, unused */
        float acc[TD / 8][4];
#pragma unroll
        for (int j = 0; j < TD / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = 0; q < KT1; ++q) consume(q, acc);
        if (tid == 0) stamp(3);
#pragma unroll
        for (int j = 0; j < TD / 16; ++j) {
            const int col = 8 * j + 2 * t4, i = c * (TG / 2) + col;
            if (col < TG / 2) {
                *reinterpret_cast<__nv_bfloat162 *>(h + (size_t)tok0 * I + i) =
                    __halves2bfloat162(swiglu1(acc[j][0], acc[j + 10][0]), swiglu1(acc[j][1], acc[j + 10][1]));
                *reinterpret_cast<__nv_bfloat162 *>(h + (size_t)tok1 * I + i) =
                    __halves2bfloat162(swiglu1(acc[j][2], acc[j + 10][2]), swiglu1(acc[j][3], acc[j + 10][3]));
            }
        }
    } else {
        float acc[TG / 8][4];
#pragma unroll
        for (int j = 0; j < TG / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = 0; q < KT1; ++q) consume(q, acc);
        if (tid == 0) stamp(3);
        /* (gate, up) pairs: column 8 j + 2 t4 of the tile is gate i, the next up i */
#pragma unroll
        for (int j = 0; j < TG / 8; ++j) {
            const int i = c * (TG / 2) + 4 * j + t4;
            h[(size_t)tok0 * I + i] = swiglu1(acc[j][0], acc[j][1]);
            h[(size_t)tok1 * I + i] = swiglu1(acc[j][2], acc[j][3]);
        }
    }
    asm volatile("bar.sync 1, 128;\n" ::: "memory"); /* every h store of the CTA issued */
    if (tid == 0) {
        __threadfence();
        atomicAdd(DEP == 2 ? cnt + 64 + c : cnt, 1);
        stamp(4);
    }
    {
        float acc[TD / 8][4];
#pragma unroll
        for (int j = 0; j < TD / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = KT1; q < NQ; ++q) consume(q, acc);
        float *p0 = part + ((size_t)sp * M + tok0) * H + nt * TD + 2 * t4, *p1 = p0 + 8 * H;
#pragma unroll
        for (int j = 0; j < TD / 8; ++j) {
            *reinterpret_cast<float2 *>(p0 + 8 * j) = make_float2(acc[j][0], acc[j][1]);
            *reinterpret_cast<float2 *>(p1 + 8 * j) = make_float2(acc[j][2], acc[j][3]);
        }
    }
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
    if (tid == 0) stamp(7);
    if (tid == 0 && atomicAdd(cnt + 32, 1) == (int)gridDim.x - 1) { /* the last CTA out: every producer is past its poll */
        cnt[0] = 0;
        cnt[32] = 0;
        if (DEP == 2)
            for (int i = 0; i < CTAS; ++i) cnt[64 + i] = 0;
        __threadfence();
    }
#endif
}

/* y = the 8 partials added in order, bf16 (4 outputs per thread) */
__global__ void sum_parts(const float4 *__restrict__ part, __nv_bfloat16 *__restrict__ y, int n4) {
    pdl_trigger();
    pdl_wait();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    float4 a = part[i];
    for (int s = 1; s < SPL; ++s) {
        const float4 b = part[(size_t)s * n4 + i];
        a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
    }
    reinterpret_cast<__nv_bfloat162 *>(y)[2 * i] = __floats2bfloat162_rn(a.x, a.y);
    reinterpret_cast<__nv_bfloat162 *>(y)[2 * i + 1] = __floats2bfloat162_rn(a.z, a.w);
}

/* the backend's swiglu_kernel (bf16), as op_swiglu launches it */
__global__ void swiglu_ref(const __nv_bfloat16 *gu, int inter, __nv_bfloat16 *out) {
    pdl_trigger();
    pdl_wait();
    const __nv_bfloat16 *g_row = gu + (size_t)blockIdx.y * 2 * inter, *u_row = g_row + inter;
    __nv_bfloat16 *o = out + (size_t)blockIdx.y * inter;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < inter; i += gridDim.x * blockDim.x) {
        const float g = __bfloat162float(g_row[i]), u = __bfloat162float(u_row[i]);
        const float s = bfr(g / (1.0f + expf(-g)));
        o[i] = __float2bfloat16_rn(s * u);
    }
}

/* W' row 2i = gate row i, 2i + 1 = up row i (one block per row) */
__global__ void interleave(const __nv_bfloat16 *w, __nv_bfloat16 *wi) {
    const int r = blockIdx.x, src = (r & 1) ? I + (r >> 1) : (r >> 1);
    const uint4 *s = reinterpret_cast<const uint4 *>(w + (size_t)src * H);
    uint4 *d = reinterpret_cast<uint4 *>(wi + (size_t)r * H);
    for (int i = threadIdx.x; i < H / 8; i += blockDim.x) d[i] = s[i];
}

template <int S, int XS> size_t mlp_smem() { return (size_t)S * WSLOT + XS * XSLOT + 2 * (S + XS) * 8 + 1024; }
template <int S, int XS, int DEP, bool MMA = true, bool PAD = false>
cudaError_t launch_mlp(const CUtensorMap &tw1, const CUtensorMap &tx1, const CUtensorMap &tw2, const CUtensorMap &tx2, __nv_bfloat16 *h,
                       float *part, int *cnt, cudaStream_t s, unsigned long long *st = nullptr) {
    static bool attr = false; /* once per instantiation, before its first (uncaptured) launch */
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(mlp_kernel<S, XS, DEP, MMA, PAD>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)mlp_smem<S, XS>());
        if (e != cudaSuccess) return e;
        attr = true;
    }
    return launch_pdl(mlp_kernel<S, XS, DEP, MMA, PAD>, dim3(CTAS), dim3(NTH), mlp_smem<S, XS>(), s, 1, tw1, tx1, tw2, tx2, h, part, cnt, st);
}

double max_rel(const std::vector<__nv_bfloat16> &a, const std::vector<__nv_bfloat16> &b, size_t *ndiff) {
    double md = 0, mr = 0;
    size_t nd = 0;
    for (size_t i = 0; i < a.size(); i++) {
        const double x = __bfloat162float(a[i]), y = __bfloat162float(b[i]);
        md = fmax(md, fabs(x - y)), mr = fmax(mr, fabs(y));
        nd += x != y;
    }
    *ndiff = nd;
    return mr > 0 ? md / mr : md;
}

} // namespace

int main(int argc, char **argv) {
    cudaStream_t s;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    const int L = argc > 1 ? atoi(argv[1]) : 36;
    /* rows: the backend's kernels take that many token rows; the fused kernel's MMAs are 64 rows
     * whatever the batch (its rows past `rows` are ignored), so only the base changes */
    const int rows = argc > 2 ? atoi(argv[2]) : M;
    if (L < 2 || rows < 17 || rows > M) {
        fprintf(stderr, "usage: exp_mlp64 [layers >= 2] [rows 17..64]\n");
        return 1;
    }
    if (sms < CTAS) {
        fprintf(stderr, "needs %d SMs (one CTA each), the device has %d\n", CTAS, sms);
        return 1;
    }
    std::vector<__nv_bfloat16 *> Wgu(L), Wgi(L), Wd(L), Wo(L);
    std::vector<CUtensorMap> tw1(L), tw1p(L), tw2(L); /* tw1p: the plain gate/up weight in 76-row boxes (PAD) */
    for (int l = 0; l < L; l++) {
        CK(cudaMalloc(&Wgu[l], (size_t)NGU * H * 2));
        CK(cudaMalloc(&Wgi[l], (size_t)NGU * H * 2));
        CK(cudaMalloc(&Wd[l], (size_t)H * I * 2));
        CK(cudaMalloc(&Wo[l], (size_t)H * A * 2));
        fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(Wgu[l]), (size_t)NGU * H / 2, 100u + l);
        fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(Wd[l]), (size_t)H * I / 2, 200u + l);
        fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(Wo[l]), (size_t)H * A / 2, 300u + l);
        interleave<<<NGU, 256, 0, s>>>(Wgu[l], Wgi[l]);
        if (!pl_cuda_tmap_2d_bf16(&tw1[l], Wgi[l], H, NGU, (uint64_t)H * 2, 64, TG) ||
            !pl_cuda_tmap_2d_bf16(&tw1p[l], Wgu[l], H, NGU, (uint64_t)H * 2, 64, TG / 2) ||
            !pl_cuda_tmap_2d_bf16(&tw2[l], Wd[l], I, H, (uint64_t)I * 2, 64, TD)) {
            fprintf(stderr, "tensor map refused\n");
            return 1;
        }
    }
    __nv_bfloat16 *x, *xo, *yo, *gu, *hb, *yb, *hf, *yf;
    float *part;
    int *cnt;
    CK(cudaMalloc(&x, (size_t)M * H * 2));
    CK(cudaMalloc(&xo, (size_t)M * A * 2));
    CK(cudaMalloc(&yo, (size_t)M * H * 2));
    CK(cudaMalloc(&gu, (size_t)M * NGU * 2));
    CK(cudaMalloc(&hb, (size_t)M * I * 2));
    CK(cudaMalloc(&yb, (size_t)M * H * 2));
    CK(cudaMalloc(&hf, (size_t)M * I * 2));
    CK(cudaMalloc(&yf, (size_t)M * H * 2));
    CK(cudaMalloc(&part, (size_t)SPL * M * H * 4));
    CK(cudaMalloc(&cnt, 256 * sizeof(int))); /* [0] count, [32] exits, [64 + c] CTA c's h stored (DEP 2) */
    CK(cudaMemset(cnt, 0, 256 * sizeof(int)));
    fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(x), (size_t)M * H / 2, 7u);
    fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(xo), (size_t)M * A / 2, 8u);
    CUtensorMap tx1, tx2;
    if (!pl_cuda_tmap_2d_bf16(&tx1, x, H, M, (uint64_t)H * 2, 64, M) || !pl_cuda_tmap_2d_bf16(&tx2, hf, I, M, (uint64_t)I * 2, 64, M)) {
        fprintf(stderr, "tensor map refused\n");
        return 1;
    }
    const int nk[3][2] = {{NGU, H}, {H, I}, {H, A}};
    pl_cuda_gemv_ws ws = chain_ws(sms, nk, 3, 0);
    CK(cudaStreamSynchronize(s));
    const int n4 = M * H / 4;
    auto base_mlp = [&](int l) {
        CK((cudaError_t)pl_cuda_gemv_bf16(Wgu[l], x, rows, NGU, H, gu, 0, PL_CUDA_GEMV_TILE, &ws, s));
        CK(launch_pdl(swiglu_ref, dim3((I + 255) / 256 < 64 ? (I + 255) / 256 : 64, rows), dim3(256), 0, s, 1, (const __nv_bfloat16 *)gu, I, hb));
        CK((cudaError_t)pl_cuda_gemv_bf16(Wd[l], hb, rows, H, I, yb, 0, PL_CUDA_GEMV_TILE, &ws, s));
    };
    unsigned long long *stamps = nullptr, *st_on = nullptr; /* st_on: stamps while set */
    CK(cudaMalloc(&stamps, (size_t)L * CTAS * 8 * 8));
    auto fused = [&](int l, auto launch, bool pad) {
        CK(launch(pad ? tw1p[l] : tw1[l], tx1, tw2[l], tx2, hf, part, cnt, s, st_on ? st_on + (size_t)l * CTAS * 8 : nullptr));
        CK(launch_pdl(sum_parts, dim3((n4 + 255) / 256), dim3(256), 0, s, 1, (const float4 *)part, yf, n4));
    };
    auto o_proj = [&](int l) { CK((cudaError_t)pl_cuda_gemv_bf16(Wo[l], xo, rows, H, A, yo, 0, PL_CUDA_GEMV_TILE, &ws, s)); };

    /* check: layer 0 both ways, the interleaved and the padded form */
    for (int form = 0; form < 2; form++) {
        base_mlp(0);
        if (form) fused(0, launch_mlp<6, 6, 1, true, true>, true);
        else fused(0, launch_mlp<6, 6, 1>, false);
        CK(cudaStreamSynchronize(s));
        std::vector<__nv_bfloat16> a((size_t)rows * I), b((size_t)rows * I), ya((size_t)rows * H), yb_((size_t)rows * H);
        CK(cudaMemcpy(a.data(), hf, a.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), hb, b.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ya.data(), yf, ya.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(yb_.data(), yb, yb_.size() * 2, cudaMemcpyDeviceToHost));
        size_t nh, ny;
        const double rh = max_rel(a, b, &nh), ry = max_rel(ya, yb_, &ny);
        printf("check layer 0, %s: h max|diff|/max|ref| %.2e (%zu of %zu differ), y %.2e (%zu of %zu differ)\n", form ? "padded" : "interleaved",
               rh, nh, a.size(), ry, ny, ya.size());
        int cz[2];
        CK(cudaMemcpy(cz, cnt, sizeof(int), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(cz + 1, cnt + 32, sizeof(int), cudaMemcpyDeviceToHost));
        printf("counters after the launch: %d %d (0 0 expected)\n", cz[0], cz[1]);
        if (rh > 1e-2 || ry > 2e-2 || cz[0] || cz[1]) printf("CHECK FAILED\n");
        CK(cudaMemset(hf, 0, (size_t)M * I * 2));
        CK(cudaMemset(yf, 0, (size_t)M * H * 2));
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const double mlp_bytes = ((double)NGU * H + (double)H * I) * 2 * L, o_bytes = (double)H * A * 2 * L;
    typedef cudaError_t (*mlp_fn)(const CUtensorMap &, const CUtensorMap &, const CUtensorMap &, const CUtensorMap &, __nv_bfloat16 *, float *,
                                  int *, cudaStream_t, unsigned long long *);
    struct var {
        const char *name;
        bool with_o;
        mlp_fn f; /* nullptr: the backend's three kernels */
        bool pad;
    } vars[] = {{"base: gate/up, SwiGLU, down", false, nullptr, false},
                {"fused, W 6 + x 4", false, launch_mlp<6, 4, 1>, false},
                {"fused, W 6 + x 6", false, launch_mlp<6, 6, 1>, false},
                {"fused, W 6 + x 6, padded", false, launch_mlp<6, 6, 1, true, true>, true},
                {"fused, W 5 + x 5, padded", false, launch_mlp<5, 5, 1, true, true>, true},
                {"fused 6+6, no wait (diag)", false, launch_mlp<6, 6, 0>, false},
                {"o + base", true, nullptr, false},
                {"o + fused, W 6 + x 6", true, launch_mlp<6, 6, 1>, false},
                {"o + fused, W 6 + x 6, padded", true, launch_mlp<6, 6, 1, true, true>, true},
                {"o + fused, W 5 + x 5, padded", true, launch_mlp<5, 5, 1, true, true>, true}};
    const int NV = sizeof vars / sizeof vars[0];
    for (int v = 0; v < NV; v++) /* each instantiation's attribute set outside capture */
        if (vars[v].f) {
            fused(0, vars[v].f, vars[v].pad);
            CK(cudaStreamSynchronize(s));
        }
    std::vector<std::vector<float>> t(NV);
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < NV; k++) {
            const int v = round % 2 ? NV - 1 - k : k;
            t[v].push_back(graph_ms(s, e0, e1, [&] {
                for (int l = 0; l < L; l++) {
                    if (vars[v].with_o) o_proj(l);
                    if (vars[v].f) fused(l, vars[v].f, vars[v].pad);
                    else base_mlp(l);
                }
            }));
        }
    printf("\n%d layers at %d rows: MLP weights %.2f GB (+ o %.2f GB); copy rate %.0f GB/s\n", L, rows, mlp_bytes / 1e9, o_bytes / 1e9, copy);
    printf("%-30s %22s %10s %10s\n", "variant", "ms (3 rounds)", "x ideal", "us/layer");
    for (int v = 0; v < NV; v++) {
        const double ideal = (mlp_bytes + (vars[v].with_o ? o_bytes : 0)) / (copy * 1e9) * 1e3;
        std::vector<float> tv = t[v];
        std::sort(tv.begin(), tv.end());
        printf("%-30s %6.3f %6.3f %6.3f %10.2f %10.2f\n", vars[v].name, tv[0], tv[1], tv[2], tv[1] / ideal, tv[1] * 1e3 / L);
    }
    /* one stamped replay of "o + fused, W 6 + x 6, padded" (the last of graph_ms's runs is read):
     * per layer, us after its first CTA's entry, min / median / max over the CTAs, means over
     * layers 1.. */
    st_on = stamps;
    graph_ms(s, e0, e1, [&] {
        for (int l = 0; l < L; l++) {
            o_proj(l);
            fused(l, launch_mlp<6, 6, 1, true, true>, true);
        }
    });
    st_on = nullptr;
    {
        std::vector<unsigned long long> hs((size_t)L * CTAS * 8);
        CK(cudaMemcpy(hs.data(), stamps, hs.size() * 8, cudaMemcpyDeviceToHost));
        const char *nm[8] = {"enter", "producer past PDL wait", "first stage in", "gate/up done", "h counted", "count seen", "first down x in", "end"};
        double acc[8][3] = {{0}}, gap = 0, d1m = 0, d2m = 0, d1x = 0, d2x = 0;
        for (int l = 1; l < L; l++) {
            const unsigned long long *q = &hs[(size_t)l * CTAS * 8], *pq = &hs[(size_t)(l - 1) * CTAS * 8];
            unsigned long long e = ~0ull, pe = 0;
            for (int c = 0; c < CTAS; c++) e = std::min(e, q[c * 8]), pe = std::max(pe, pq[c * 8 + 7]);
            gap += ((double)e - (double)pe) / 1e3;
            std::vector<float> d1, d2;
            for (int k = 0; k < 8; k++) {
                std::vector<float> v;
                for (int c = 0; c < CTAS; c++) v.push_back((float)((double)q[c * 8 + k] - (double)e) / 1e3f);
                std::sort(v.begin(), v.end());
                acc[k][0] += v[0], acc[k][1] += v[v.size() / 2], acc[k][2] += v.back();
            }
            for (int c = 0; c < CTAS; c++) {
                d1.push_back((float)(q[c * 8 + 3] - q[c * 8 + 2]) / 1e3f);
                d2.push_back((float)(q[c * 8 + 7] - q[c * 8 + 6]) / 1e3f);
            }
            std::sort(d1.begin(), d1.end());
            std::sort(d2.begin(), d2.end());
            d1m += d1[d1.size() / 2], d1x += d1.back(), d2m += d2[d2.size() / 2], d2x += d2.back();
        }
        const double n = L - 1;
        printf("\nstamped o + fused (W 6 + x 6, padded), layers 1-%d, us after the layer's first entry (means over layers)\n", L - 1);
        printf("%-26s %8s %8s %8s\n", "stamp", "min", "median", "max");
        for (int k = 0; k < 8; k++) printf("%-26s %8.2f %8.2f %8.2f\n", nm[k], acc[k][0] / n, acc[k][1] / n, acc[k][2] / n);
        printf("first entry after the layer before's last end: %.2f us\n", gap / n);
        printf("gate/up stream per CTA (first stage in -> done): median %.2f us, max %.2f (%.0f KB: %.1f GB/s per CTA at the median)\n", d1m / n,
               d1x / n, TG * H * 2 / 1e3, TG * H * 2 / (d1m / n * 1e3));
        printf("down per CTA (first x in -> end): median %.2f us, max %.2f (%.0f KB)\n", d2m / n, d2x / n, (double)TD * KT2 * 64 * 2 / 1e3);
    }
    return 0;
}
