/* Experiment: can the DRAM idle during a decode step's latency-bound stretches (the attention
 * and the small kernels at batch 4 read a few MB in ~8-10 us per layer) carry the next
 * projection's weights in early, so the projection after them is shorter? Earlier tries asked
 * L2 for them from inside the GEMMs (fifth session: before the PDL wait; ninth: after the last
 * stage) and found nothing coming back. Here it is asked directly, with the backend's tile
 * GEMM (pl_cuda_gemv_bf16, M = 4, PDL launches, as in a step) after a "bubble" kernel that
 * holds SMs and shared memory like the decode attention for T us without touching DRAM. 36
 * layers of distinct weights (cold, far beyond L2) in a CUDA graph, median of replays; per layer:
 *   bubble              the bubble alone (what the GEMM's cost is measured against);
 *   bubble, GEMM        the GEMM after the bubble, cold weights;
 *   prefetch, bubble, GEMM  a one-warp-per-CTA kernel first asks L2 for the GEMM's weights
 *                       (cp.async.bulk.prefetch.L2, 32 KiB requests) and exits; the bubble
 *                       runs while they stream in; the prefetch kernel either starts beside
 *                       the GEMM before it (PDL, no wait) or waits for it first;
 *   bubble, GEMM (warm) every layer on the same weights (L2-resident after the first): the
 *                       most an L2 prefetch could give;
 *   preloading projection  (where a CTA's share fits in shared memory: o) one CTA per SM owns
 *                       N / 132 rows over all K and bulk-copies them into shared memory at
 *                       entry, before its PDL wait; tensor-core math after the wait;
 *   row ownership       the same ownership as a streaming kernel for every shape (rows_gemv);
 *   --bubble-prefetch   only this: the bubble's CTAs themselves bring the next GEMM's weights
 *                       into L2 at their start (as an attention kernel could for the o
 *                       projection): by cp.async.bulk.prefetch.L2, by one prefetch.global.L2
 *                       per line, or by real reads (8 KiB bulk copies into shared memory,
 *                       discarded), against the GEMM cold and warm after a plain bubble.
 * GEMM cost = (variant - bubble alone) / 36. Both largest and default shared-memory carveouts.
 * Results (PERF.md, eleventh session; bench/cuda/results-h200-model/session11/runs/): the o
 * projection takes 8.6-9.6 us after the bubble on cold weights and still 6.85-7.46 us on
 * L2-resident ones (qkv 10.3-11.6 / 7.83-8.07), so the GEMM is bound by its own latency, not by
 * DRAM; the prefetch kernel costs more than it returns (beside: +0.8-3 us, after: +5-9 us:
 * its end waits for the prefetched bytes); the preloading projection takes 5.5 us after a
 * 32 KiB bubble (its CTAs enter beside it), 7.5 us after a 100 KiB one and 9.6 us after a
 * 196 KiB one (they cannot), 8.2 us alone; the streaming row-ownership kernel is slower than
 * the tile GEMM on all four projections (24-71% in a chain of its own, 1-67% after a 3 us
 * bubble). Thirteenth session (weights evict_first in the tile GEMM), --bubble-prefetch, us per
 * layer after a 100 KiB 8 us bubble: o cold 8.70, warm 6.87, prefetched by the bubble 9.63; qkv
 * 10.30 / 7.84 / 12.21. Slower than cold after the 100 and 32 KiB bubbles and the 3 us one,
 * 0.2-0.4 us faster after the 196 KiB one; nowhere near warm (run 3 of session13/runs/).
 * Twenty-first session (session21/runs/r5-r7, r10, r18): no prefetch instruction gave hits
 * even with 50 us to land (o after a 32 KiB 50 us bubble: cold 8.9-9.2, warm 7.5-8.0, bulk
 * prefetch 11.7-12.2, line prefetch 12.2-12.5 us/layer), while real reads by the bubble did: o
 * 7.7-8.2 after 8 or 20 us 100 KiB bubbles (cold 9.6-9.9, warm 7.2-7.7), qkv 8.5-8.8 after 20 us
 * (cold 10.2-10.5, warm 8.2-8.6; 8 us is too short for its 31 MB). In the decode step such
 * reads by extra attention CTAs lost 1-9% at batch 2-8 (they held up the attention), and the
 * GEMM's own per-row bulk copies were far too slow (128-640-byte requests).
 *
 * Not part of the build. On a GPU machine (after building libpagellm.a in build-gpu):
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda bench/cuda/exp_l2_prefetch.cu \
 *        build-gpu/libpagellm.a -lcuda -o exp_l2_prefetch
 *   ./exp_l2_prefetch [--bubble-prefetch]
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/gemv_cuda.h"
#include "cuda/ptx.cuh"
#include "exp_util.cuh"
#include "exp_chain.cuh"

namespace {

constexpr int LAYERS = 36, M = 4;


constexpr size_t PF_CHUNK = 32768; /* bytes per L2 prefetch request */

/* asks L2 for bytes [off, off + n) of p, n <= PF_CHUNK; nothing waits for the data */
__device__ __forceinline__ void l2_prefetch(const char *p, size_t off, size_t bytes) {
    const unsigned n = (unsigned)(bytes - off < PF_CHUNK ? bytes - off : PF_CHUNK);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p + off), "r"(n) : "memory");
}

/* holds its SM slot (and smem) for ns nanoseconds after the kernel before it, as the decode
 * attention does at batch 4, without DRAM traffic of its own; with p set, each CTA first
 * brings its share of the bytes at p (the next GEMM's weights) into L2, as an attention kernel
 * could for the o projection after it: how 0 by bulk prefetch requests, 1 by one prefetch per
 * line, 2 by real reads (inside the bubble's time) */
__global__ void bubble(long long ns, const char *p, size_t bytes, int how) {
    pdl_trigger();
    pdl_wait();
    extern __shared__ unsigned char sm[];
    if (p && how == 0) {
        const size_t share = (bytes / gridDim.x + PF_CHUNK - 1) / PF_CHUNK * PF_CHUNK, b0 = share * blockIdx.x;
        for (size_t off = b0 + threadIdx.x * PF_CHUNK; off < b0 + share && off < bytes; off += blockDim.x * PF_CHUNK)
            l2_prefetch(p, off, bytes);
    } else if (p && how == 1) { /* one prefetch.global.L2 per 128-byte line */
        for (size_t off = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * 128; off < bytes; off += (size_t)gridDim.x * blockDim.x * 128)
            asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p + off));
    }
    if (threadIdx.x == 0) {
        const unsigned long long t0 = gtimer();
        if (p && how == 2) { /* real reads: the CTA's share by 8 KiB bulk copies into two scratch buffers (discarded),
                              * inside the bubble's time */
            const uint32_t buf = smem_u32(sm), bars = buf + 16384;
            mbar_init(bars, 1);
            mbar_init(bars + 8, 1);
            mbar_init_fence();
            const size_t share = (bytes / gridDim.x + 8191) / 8192 * 8192, b0 = share * blockIdx.x;
            int i = 0;
            for (size_t off = b0; off < b0 + share && off < bytes; off += 8192, i++) {
                if (i >= 2) mbar_wait(bars + 8 * (i & 1), (unsigned)((i - 2) >> 1) & 1u);
                const unsigned n = (unsigned)(bytes - off < 8192 ? bytes - off : 8192);
                mbar_expect_tx(bars + 8 * (i & 1), n);
                bulk_load(buf + 8192 * (i & 1), p + off, (int)n, bars + 8 * (i & 1));
            }
            for (int j = i - 2 < 0 ? 0 : i - 2; j < i; j++) mbar_wait(bars + 8 * (j & 1), (unsigned)(j >> 1) & 1u);
        }
        while ((long long)(gtimer() - t0) < ns) {
        }
        sm[0] = 1;
    }
    __syncthreads();
}

/* asks L2 for bytes at p in PF_CHUNK requests and exits (nothing waits for the data); after
 * the kernel before it when wait != 0, else at once (beside that kernel's tail) */
__global__ void prefetch_l2(const char *p, size_t bytes, int wait) {
    pdl_trigger();
    if (wait) pdl_wait();
    for (size_t off = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * PF_CHUNK; off < bytes;
         off += (size_t)gridDim.x * blockDim.x * PF_CHUNK)
        l2_prefetch(p, off, bytes);
}

/* The projection with its whole weight share resident before the PDL wait: one CTA per SM
 * owns rows [N c / C, N (c + 1) / C) (at most 32) over all of K; thread 0 issues each row as
 * one bulk copy into shared memory (rows padded by 16 bytes against bank conflicts, an
 * mbarrier per row) at entry, so the bytes stream in while the kernel before (the bubble)
 * still runs. After the wait x comes in (M x K from L2), and 16 warps split K: each runs
 * m16n8k16 MMAs over its k steps for the CTA's two 16-row tiles (rows past the share re-read
 * the last one; their sums are dropped) and the warps add up in shared memory. */
constexpr int PRE_ROWS = 32, PRE_WARPS = 16;
__global__ void __launch_bounds__(PRE_WARPS * 32, 1) preload_gemv(const __nv_bfloat16 *__restrict__ W, const __nv_bfloat16 *__restrict__ x,
                                                                  int N, int K, __nv_bfloat16 *__restrict__ y) {
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char psm[];
    const int c = blockIdx.x, C = gridDim.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int r0 = (int)((long long)N * c / C), nr = (int)((long long)N * (c + 1) / C) - r0;
    const int RS = K * 2 + 16; /* padded row bytes */
    const uint32_t wsm = smem_u32(psm), xsm = wsm + (uint32_t)nr * RS, bars = xsm + (uint32_t)M * RS;
    if (threadIdx.x == 0) {
        for (int r = 0; r < nr; r++) mbar_init(bars + 8 * r, 1);
        mbar_init_fence();
        for (int r = 0; r < nr; r++) {
            mbar_expect_tx(bars + 8 * r, (unsigned)K * 2);
            bulk_load(wsm + r * RS, W + (size_t)(r0 + r) * K, K * 2, bars + 8 * r);
        }
    }
    pdl_wait();
    for (int i = threadIdx.x; i < M * K / 8; i += PRE_WARPS * 32) {
        const int tok = i / (K / 8), ch = i % (K / 8);
        cp_async16(xsm + tok * RS + ch * 16, x + (size_t)tok * K + ch * 8, 16);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    for (int r = 0; r < nr; r++) mbar_wait(bars + 8 * r, 0);
    const unsigned char *sw = psm, *sx = psm + (size_t)nr * RS;
    int rows[4]; /* this lane's A rows: g, g + 8, 16 + g, 24 + g (clamped to the share) */
    for (int i = 0; i < 4; i++) rows[i] = min(g + 8 * i, nr - 1);
    float acc[2][4] = {};
    for (int ks = warp; ks < K / 16; ks += PRE_WARPS) {
        const int kb = ks * 32 + t * 4; /* byte offset of k = 16 ks + 2 t */
        uint32_t b0 = 0, b1 = 0;
        if (g < M) {
            b0 = *reinterpret_cast<const uint32_t *>(sx + g * RS + kb);
            b1 = *reinterpret_cast<const uint32_t *>(sx + g * RS + kb + 16);
        }
#pragma unroll
        for (int mt = 0; mt < 2; mt++) {
            const uint32_t a[4] = {*reinterpret_cast<const uint32_t *>(sw + rows[2 * mt] * RS + kb),
                                   *reinterpret_cast<const uint32_t *>(sw + rows[2 * mt + 1] * RS + kb),
                                   *reinterpret_cast<const uint32_t *>(sw + rows[2 * mt] * RS + kb + 16),
                                   *reinterpret_cast<const uint32_t *>(sw + rows[2 * mt + 1] * RS + kb + 16)};
            mma_bf16(acc[mt], a, b0, b1);
        }
    }
    __syncthreads(); /* every warp is done with the weights: their space takes the sums */
    float *red = reinterpret_cast<float *>(psm);
    for (int mt = 0; mt < 2; mt++)
        for (int e = 0; e < 4; e++) red[((warp * 2 + mt) * 4 + e) * 32 + lane] = acc[mt][e];
    __syncthreads();
    if (threadIdx.x < 256) { /* (m tile, e, lane) */
        const int mt = threadIdx.x >> 7, e = (threadIdx.x >> 5) & 3, ln = threadIdx.x & 31;
        float v = 0.f;
        for (int w = 0; w < PRE_WARPS; w++) v += red[((w * 2 + mt) * 4 + e) * 32 + ln];
        const int row = mt * 16 + (ln >> 2) + (e >= 2 ? 8 : 0), tok = 2 * (ln & 3) + (e & 1);
        if (row < nr && tok < M) y[(size_t)tok * N + r0 + row] = __float2bfloat16_rn(v);
    }
}

/* The same row ownership as a streaming kernel for any shape: CTA c owns rows [N c / C,
 * N (c + 1) / C) over all of K (no K split, so no partial sums between CTAs), taken as 16-row
 * MMA tiles; a producer warp walks (row tile, 512-k piece) in order and issues each piece as
 * one bulk copy per weight row and per x row into an S-slot ring (rows padded to 1040 bytes:
 * conflict-free fragment loads), weights before the PDL wait, x after it; 8 consumer warps
 * split each piece's k steps (m16n8k16) and release the slot; at the end of a row tile they
 * add up in shared memory and store. */
constexpr int RG_KC = 512, RG_RS = RG_KC * 2 + 16, RG_PIECE = (16 + M) * RG_RS, RG_CW = 8;
__device__ __forceinline__ void rg_sync() { asm volatile("bar.sync 1, %0;\n" ::"n"(RG_CW * 32) : "memory"); }
template <int S>
__global__ void __launch_bounds__((RG_CW + 1) * 32, 1) rows_gemv(const __nv_bfloat16 *__restrict__ W, const __nv_bfloat16 *__restrict__ x,
                                                                 int N, int K, __nv_bfloat16 *__restrict__ y) {
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char rsm[];
    const int c = blockIdx.x, C = gridDim.x, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int r0 = (int)((long long)N * c / C), nr = (int)((long long)N * (c + 1) / C) - r0;
    const int nmt = (nr + 15) / 16, npc = (K + RG_KC - 1) / RG_KC;
    const uint32_t ring = smem_u32(rsm), red = ring + S * RG_PIECE, full = red + RG_CW * 32 * 16, empty = full + 8 * S;
    if (threadIdx.x == 0) {
        for (int i = 0; i < S; i++) mbar_init(full + 8 * i, 1), mbar_init(empty + 8 * i, RG_CW);
        mbar_init_fence();
    }
    __syncthreads();
    if (warp == RG_CW) { /* producer */
        if (lane != 0) return;
        const int total = nmt * npc;
        auto issue = [&](int j, bool wpart, bool xpart) {
            const int mt = j / npc, kc = (j % npc) * RG_KC, kn = min(RG_KC, K - kc), rows = min(16, nr - mt * 16);
            const uint32_t dst = ring + (j % S) * RG_PIECE, bar = full + 8 * (j % S);
            if (wpart) {
                mbar_expect_tx(bar, (unsigned)(rows + M) * kn * 2);
                for (int r = 0; r < rows; r++) bulk_load(dst + r * RG_RS, W + (size_t)(r0 + mt * 16 + r) * K + kc, kn * 2, bar);
            }
            if (xpart)
                for (int t = 0; t < M; t++) bulk_load(dst + (16 + t) * RG_RS, x + (size_t)t * K + kc, kn * 2, bar);
        };
        const int pre = min(S, total);
        for (int j = 0; j < pre; j++) issue(j, true, false); /* weights do not depend on the kernel before */
        pdl_wait();
        for (int j = 0; j < pre; j++) issue(j, false, true);
        for (int j = pre; j < total; j++) {
            mbar_wait(empty + 8 * (j % S), (unsigned)((j / S) - 1) & 1u);
            issue(j, true, true);
        }
        return;
    }
    pdl_wait(); /* y may still be read or written by the kernel before */
    const int g = lane >> 2, t = lane & 3;
    const unsigned char *base = rsm;
    float *redf = reinterpret_cast<float *>(rsm + S * RG_PIECE);
    int j = 0;
    for (int mt = 0; mt < nmt; mt++) {
        float acc[4] = {0.f, 0.f, 0.f, 0.f};
        for (int pc = 0; pc < npc; pc++, j++) {
            const int kn = min(RG_KC, K - pc * RG_KC);
            mbar_wait(full + 8 * (j % S), (unsigned)(j / S) & 1u);
            const unsigned char *sl = base + (j % S) * RG_PIECE;
            for (int st = warp; st < kn / 16; st += RG_CW) {
                const int kb = st * 32 + t * 4;
                const uint32_t a[4] = {*reinterpret_cast<const uint32_t *>(sl + g * RG_RS + kb),
                                       *reinterpret_cast<const uint32_t *>(sl + (g + 8) * RG_RS + kb),
                                       *reinterpret_cast<const uint32_t *>(sl + g * RG_RS + kb + 16),
                                       *reinterpret_cast<const uint32_t *>(sl + (g + 8) * RG_RS + kb + 16)};
                uint32_t b0 = 0, b1 = 0;
                if (g < M) {
                    b0 = *reinterpret_cast<const uint32_t *>(sl + (16 + g) * RG_RS + kb);
                    b1 = *reinterpret_cast<const uint32_t *>(sl + (16 + g) * RG_RS + kb + 16);
                }
                mma_bf16(acc, a, b0, b1);
            }
            __syncwarp();
            if (lane == 0) mbar_arrive(empty + 8 * (j % S));
        }
        for (int e = 0; e < 4; e++) redf[(warp * 4 + e) * 32 + lane] = acc[e];
        rg_sync();
        if (threadIdx.x < 128) {
            const int e = threadIdx.x >> 5, ln = threadIdx.x & 31;
            float v = 0.f;
            for (int w = 0; w < RG_CW; w++) v += redf[(w * 4 + e) * 32 + ln];
            const int row = mt * 16 + (ln >> 2) + (e >= 2 ? 8 : 0), tok = 2 * (ln & 3) + (e & 1);
            if (row < nr && tok < M) y[(size_t)tok * N + r0 + row] = __float2bfloat16_rn(v);
        }
        rg_sync();
    }
}

template <typename... KArgs, typename... Args>
void launch(void (*k)(KArgs...), int grid, int block, size_t smem, cudaStream_t s, Args... args) {
    CK(launch_pdl(k, dim3((unsigned)grid), dim3((unsigned)block), smem, s, 1, args...));
}

/* largest |difference| between ref and the bf16 outputs run() leaves in y */
template <typename F> double max_diff(cudaStream_t s, const __nv_bfloat16 *y, const std::vector<__nv_bfloat16> &ref, F run) {
    std::vector<__nv_bfloat16> b(ref.size());
    run();
    CK(cudaMemcpyAsync(b.data(), y, b.size() * 2, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    double d = 0;
    for (size_t i = 0; i < b.size(); i++) d = fmax(d, fabs((double)__bfloat162float(ref[i]) - __bfloat162float(b[i])));
    return d;
}

} // namespace

int main(int argc, char **argv) {
    const bool pf_only = argc > 1 && !strcmp(argv[1], "--bubble-prefetch");
    cudaStream_t s;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    struct shape {
        const char *name;
        int N, K;
    } shapes[] = {{"o [2560 x 4096]", 2560, 4096}, {"qkv [6144 x 2560]", 6144, 2560}, {"gate_up [19456 x 2560]", 19456, 2560},
                  {"down [2560 x 9728]", 2560, 9728}};
    struct bub {
        int ctas;
        size_t smem;
        long long ns;
    } bubs[] = {{128, 196 * 1024, 8000}, {128, 100 * 1024, 8000}, {128, 32 * 1024, 8000}, {128, 100 * 1024, 3000}};
    CK(cudaFuncSetAttribute(bubble, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    CK(cudaFuncSetAttribute(preload_gemv, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    const size_t rg_smem4 = 4 * RG_PIECE + RG_CW * 32 * 16 + 16 * 4, rg_smem8 = 8 * RG_PIECE + RG_CW * 32 * 16 + 16 * 8;
    CK(cudaFuncSetAttribute(rows_gemv<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)rg_smem4));
    CK(cudaFuncSetAttribute(rows_gemv<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)rg_smem8));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (const shape &sh : shapes) {
        const size_t wb = (size_t)sh.N * sh.K * 2;
        gemm_layers gl(s, LAYERS, M, sh.N, sh.K, sms);
        std::vector<__nv_bfloat16 *> &W = gl.W;
        __nv_bfloat16 *x = gl.x, *y = gl.y;
        pl_cuda_gemv_ws &ws = gl.ws;
        auto tile_ref = [&](const __nv_bfloat16 *w) { /* the tile GEMM's output, the reference of the checks */
            std::vector<__nv_bfloat16> a((size_t)M * sh.N);
            CK((cudaError_t)pl_cuda_gemv_bf16(w, x, M, sh.N, sh.K, y, 0, PL_CUDA_GEMV_TILE, &ws, s));
            CK(cudaMemcpyAsync(a.data(), y, a.size() * 2, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            return a;
        };
        printf("%s: %.1f MB of weights per layer, %d splits, ideal %.2f us at the copy rate\n", sh.name, wb / 1e6,
               pl_cuda_gemv_tile_splits(sh.N, sh.K, M, &ws), wb / (copy * 1e3));
        if (!pf_only) { /* row ownership (rows_gemv, 4- and 8-slot rings) against the tile GEMM: chains of 36, alone and with a
           * 3 us small-smem bubble before each GEMM (a small op's stand-in) */
            float ms[7];
            for (int v = 0; v < 7; v++) {
                auto enqueue = [&] {
                    for (int l = 0; l < LAYERS; l++) {
                        if (v >= 3) launch(bubble, 128, 256, (size_t)16, s, 3000LL, (const char *)nullptr, (size_t)0, 0);
                        const int k = v >= 3 ? v - 3 : v + 1; /* 0: bubble only, 1 tile, 2 rows<4>, 3 rows<8> */
                        if (k == 1) CK((cudaError_t)pl_cuda_gemv_bf16(W[l], x, M, sh.N, sh.K, y, 0, PL_CUDA_GEMV_TILE, &ws, s));
                        if (k == 2) launch(rows_gemv<4>, sms, (RG_CW + 1) * 32, rg_smem4, s, (const __nv_bfloat16 *)W[l], (const __nv_bfloat16 *)x, sh.N, sh.K, y);
                        if (k == 3) launch(rows_gemv<8>, sms, (RG_CW + 1) * 32, rg_smem8, s, (const __nv_bfloat16 *)W[l], (const __nv_bfloat16 *)x, sh.N, sh.K, y);
                    }
                };
                ms[v] = graph_ms(s, e0, e1, enqueue);
            }
            const double per = 1e3 / LAYERS;
            printf("  row ownership, us/layer: chain alone: tile GEMM %.2f, rows 4 slots %.2f, rows 8 slots %.2f; after a 3 us small-smem "
                   "bubble (%.2f alone): tile %.2f, rows 4 slots %.2f, rows 8 slots %.2f\n",
                   ms[0] * per, ms[1] * per, ms[2] * per, ms[3] * per, (ms[4] - ms[3]) * per, (ms[5] - ms[3]) * per, (ms[6] - ms[3]) * per);
            const std::vector<__nv_bfloat16> ref = tile_ref(W[1]);
            const double d4 = max_diff(s, y, ref, [&] {
                launch(rows_gemv<4>, sms, (RG_CW + 1) * 32, rg_smem4, s, (const __nv_bfloat16 *)W[1], (const __nv_bfloat16 *)x, sh.N, sh.K, y);
            });
            const double d8 = max_diff(s, y, ref, [&] {
                launch(rows_gemv<8>, sms, (RG_CW + 1) * 32, rg_smem8, s, (const __nv_bfloat16 *)W[1], (const __nv_bfloat16 *)x, sh.N, sh.K, y);
            });
            double mx = 0;
            for (const __nv_bfloat16 &v : ref) mx = fmax(mx, fabs((double)__bfloat162float(v)));
            printf("    check: rows 4 / 8 slots against the tile GEMM: max |diff| %.3g / %.3g of max |y| %.3g\n", d4, d8, mx);
        }
        if (pf_only) { /* the bubble bringing the GEMM's weights into L2 itself, against cold and warm, o and qkv */
            static const char *const vn[] = {"cold", "warm", "bulk prefetch", "line prefetch", "bulk reads"};
            const bub pbubs[] = {{128, 196 * 1024, 8000}, {128, 100 * 1024, 8000}, {128, 32 * 1024, 8000},
                                 {128, 100 * 1024, 3000}, {128, 100 * 1024, 20000}, {128, 32 * 1024, 50000}};
            if (sh.N * (size_t)sh.K <= (size_t)6144 * 2560)
                for (const bub &bb : pbubs) {
                    float ms[6] = {};
                    for (int v = 0; v < 6; v++) /* 0 bubble alone, then vn[v - 1]: 3-5 the bubble over the GEMM's weights */
                        ms[v] = graph_ms(s, e0, e1, [&] {
                            for (int l = 0; l < LAYERS; l++) {
                                const __nv_bfloat16 *w = W[v == 2 ? 0 : l];
                                launch(bubble, bb.ctas, 256, bb.smem, s, bb.ns, v >= 3 ? reinterpret_cast<const char *>(w) : nullptr,
                                       v >= 3 ? wb : (size_t)0, v >= 3 ? v - 3 : 0);
                                if (v) CK((cudaError_t)pl_cuda_gemv_bf16(w, x, M, sh.N, sh.K, y, 0, PL_CUDA_GEMV_TILE, &ws, s));
                            }
                        });
                    const double per = 1e3 / LAYERS;
                    printf("%s, bubble %d CTAs x %zu KiB for %.1f us: alone %.2f us/layer; GEMM after it, us/layer:", sh.name, bb.ctas,
                           bb.smem / 1024, bb.ns / 1e3, ms[0] * per);
                    for (int v = 1; v < 6; v++) printf(" %s %.2f%s", vn[v - 1], (ms[v] - ms[0]) * per, v < 5 ? ";" : "\n");
                }
            continue;
        }
        if (sh.N * (size_t)sh.K > (size_t)6144 * 2560) { /* the bubble study: o and qkv only */
            continue;
        }
        for (int carve = 0; carve < 2; carve++)
        for (const bub &bb : bubs) {
            /* carve 1: the bubble asks for the largest shared-memory carveout, so an SM running it
             * can take a big-smem CTA of the next kernel beside it without reconfiguring */
            CK(cudaFuncSetAttribute(bubble, cudaFuncAttributePreferredSharedMemoryCarveout, carve ? 100 : -1));
            CK(cudaFuncSetAttribute(preload_gemv, cudaFuncAttributePreferredSharedMemoryCarveout, carve ? 100 : -1));
            /* variant 0 bubble alone, 1 bubble + GEMM, 2 prefetch + bubble + GEMM, 3 bubble + GEMM warm, 4 GEMM
             * alone, 5 prefetch (after the GEMM before it) + bubble + GEMM */
            /* 6 bubble + preloading projection, 7 the preloading projection alone (when a share fits) */
            const int pre_rows = (sh.N + sms - 1) / sms;
            const size_t pre_smem = (size_t)(pre_rows + M) * (sh.K * 2 + 16) + 8 * PRE_ROWS;
            const bool pre = pre_smem <= 227 * 1024 && pre_rows <= PRE_ROWS;
            float ms[8] = {};
            for (int v = 0; v < (pre ? 8 : 6); v++) {
                auto enqueue = [&] {
                    for (int l = 0; l < LAYERS; l++) {
                        const __nv_bfloat16 *w = W[v == 3 ? 0 : l];
                        if (v == 2 || v == 5)
                            launch(prefetch_l2, (int)((wb + 32 * PF_CHUNK - 1) / (32 * PF_CHUNK)), 32, 0, s, reinterpret_cast<const char *>(w),
                                   wb, v == 5 ? 1 : 0);
                        if (v != 4 && v != 7) launch(bubble, bb.ctas, 256, bb.smem, s, bb.ns, (const char *)nullptr, (size_t)0, 0);
                        if (v >= 6) launch(preload_gemv, sms, PRE_WARPS * 32, pre_smem, s, w, (const __nv_bfloat16 *)x, sh.N, sh.K, y);
                        else if (v != 0) CK((cudaError_t)pl_cuda_gemv_bf16(w, x, M, sh.N, sh.K, y, 0, PL_CUDA_GEMV_TILE, &ws, s));
                    }
                };
                ms[v] = graph_ms(s, e0, e1, enqueue);
            }
            const double per = 1e3 / LAYERS;
            printf("  %sbubble %d CTAs x %zu KiB for %.1f us: alone %.2f us/layer; GEMM after it: cold %.2f, prefetched during it "
                   "%.2f (prefetch beside the GEMM before) / %.2f (after it), warm %.2f; GEMMs alone %.2f us/layer\n",
                   carve ? "max carveout: " : "", bb.ctas, bb.smem / 1024, bb.ns / 1e3, ms[0] * per, (ms[1] - ms[0]) * per, (ms[2] - ms[0]) * per,
                   (ms[5] - ms[0]) * per, (ms[3] - ms[0]) * per, ms[4] * per);
            if (pre)
                printf("    the projection with its share resident before the wait (%zu KiB per CTA, %d CTAs): after the bubble %.2f us/layer, "
                       "alone %.2f us/layer\n",
                       pre_smem / 1024, sms, (ms[6] - ms[0]) * per, ms[7] * per);
        }
        { /* the preloading projection computes what the tile GEMM computes (layer 0) */
            const int pre_rows = (sh.N + sms - 1) / sms;
            const size_t pre_smem = (size_t)(pre_rows + M) * (sh.K * 2 + 16) + 8 * PRE_ROWS;
            if (pre_smem <= 227 * 1024 && pre_rows <= PRE_ROWS) {
                const std::vector<__nv_bfloat16> ref = tile_ref(W[0]);
                const double md = max_diff(s, y, ref, [&] {
                    launch(preload_gemv, sms, PRE_WARPS * 32, pre_smem, s, (const __nv_bfloat16 *)W[0], (const __nv_bfloat16 *)x, sh.N, sh.K, y);
                });
                double mx = 0;
                for (const __nv_bfloat16 &v : ref) mx = fmax(mx, fabs((double)__bfloat162float(v)));
                printf("    check: the preloading projection against the tile GEMM: max |diff| %.3g of max |y| %.3g\n", md, mx);
            }
        }
    }
    return 0;
}
