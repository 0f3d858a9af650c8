/* Experiment (twenty-eighth session): the 64-row projection chain as one persistent kernel whose
 * weight stream never stops at a GEMM boundary.
 *
 * Why: at batch 64 the tile GEMM runs one 97 KiB CTA per SM (two on many SMs, see
 * diag_timeline.py's placement table), keeping 48-64 KiB of weights in flight per CTA; the
 * projections stream 2.3-2.8 TB/s in their own chains, where the LM head's 264 resident CTAs
 * (~17 MB in flight) stream 4.1 TB/s. Deeper rings keep the next kernel's CTAs out, more K
 * splits cost their sums (PERF.md, twenty-eighth session). A persistent kernel needs no room for
 * the next kernel: one CTA per SM with a ring of S stages (24 KiB each: 128 weight rows and 64
 * token rows of x, 64 k) keeps up to S x 16 KiB of weights in flight across every boundary.
 *
 * The kernel: one CTA per SM (a cooperative launch, so all are resident), 8 consumer warps (two
 * warpgroups, wgmma m64n64k16 as the backend's tile kernel: 64 weight rows each x 64 tokens)
 * and one producer lane. Each GEMM's (128-row tile, 64-k stage) pairs, tile-major, are cut into
 * as many equal ranges as CTAs; a CTA's range crosses at most a few tile ends. The producer walks
 * the CTA's stages over all GEMMs with two cursors: weights as soon as a slot is free (they
 * depend on nothing), x only once the GEMM before has finished (its counter reached the CTA
 * count: an acquire load, then a proxy fence before the TMA reads). At each piece's end (a tile
 * end or the range's) the consumers add its accumulators into an f32 [N][64] output: RED = 2,
 * through a 32 KiB staging tile and one bulk reduce (cp.reduce.async.bulk .add.f32); RED = 1,
 * red.global.add.v2.f32 from every thread; RED = 0, not at all (a diagnostic). After its last
 * piece of a GEMM a CTA counts itself done (its bulk reduces performed, a release fence).
 * XS > 0: separate rings, S weight slots and XS x slots, so more of the next GEMM's weights can
 * wait in shared memory at a boundary.
 *
 * Its x inputs are fixed buffers, not the previous GEMM's outputs, so the harness times the
 * stream, the MMAs, the sums and the dependency waits of a real chain without the conversions;
 * the dependency counters are real. The reference is the backend's kernel (pl_cuda_gemv_bf16)
 * in a graph of PDL launches, as exp_tile_xreg.cu times it. Check: the persistent kernel's f32
 * sums of layer 0's four GEMMs against the backend's bf16 outputs.
 *
 * persist_own_kernel (OWN): x-writer warps make each stage's x from the f32 sums in the ring.
 * persist_cl_kernel (clusters of CL): the ranks of a cluster split each piece by k and add
 * their partials through distributed shared memory, rank r sending rows r 128 / CL ... as one
 * bulk reduce; persist_async_kernel: the same (CL = 1: without clusters) with four reducer warps
 * doing the sums from two staging tiles, so the MMA warps never wait for them.
 *
 * CONV: a step between GEMMs that makes the next x from the sums (convert_rows), a second
 * grid-wide hop per boundary. Every variant is timed twice: with one f32 output per GEMM (283 MB,
 * checked against the backend) and with one per projection kind reused by every layer
 * (L2-resident, as the backend's outputs are; not checked).
 *
 * Measured (PERF.md, twenty-eighth session, runs 6-19), x of the ideal at the copy rate: the
 * stream alone 0.95; with the waits 1.03-1.08; with bulk-reduce sums and waits 1.27-1.30 on
 * reused outputs (1.38-1.41 on per-GEMM ones), against 1.46-1.47 for the backend's chain;
 * red.v2 sums, cluster pairs and deeper weight rings no better; the sums cost by their volume
 * through L2. CONV: 2.50-2.65 with a rolled conversion loop (an L2 round trip per item, ~14 us
 * a boundary), 1.90 with its loads issued in one round (~7.5 us a boundary). TCONV (each tile
 * converted by the reducers of its last piece): 3.7. OWN (x written per stage from the sums by
 * x-writer warps): 3.9.
 *
 * Not part of the build. On a GPU machine, after the CMake build in build-gpu:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda \
 *       bench/cuda/exp_persist64.cu build-gpu/libpagellm.a -o exp_persist64
 *   ./exp_persist64
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

constexpr int TBM = 128, TBK = 64, M = 64, WB = TBM * TBK * 2, XB = M * TBK * 2, STG = WB + XB;
constexpr int CONS = 256, NTH = CONS + 32;
constexpr int CPAD = 32; /* ints between two counters: each on its own 128-byte line (polled by every CTA) */

/* one GEMM of the chain: tensor maps of W [N][K] (boxes 128 x 64) and x [64][K] (64 x 64) */
struct gdesc {
    CUtensorMap tw, tx;
    float *out;        /* [N][64] f32 sums */
    __nv_bfloat16 *xb; /* the [64][K] x that tx maps (CONV: written from the GEMM before's sums) */
    int N, K, tiles, KT;
};

__device__ __forceinline__ void red_add_v2(float *p, float a, float b) {
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b) : "memory");
}

/* this CTA's stage range [s0, s1) of GEMM g (tile-major (tile, k stage) pairs) */
__device__ __forceinline__ void range_of(const gdesc &d, int c, int C, int &s0, int &s1) {
    const int T = d.tiles * d.KT; /* < 2^31 / C for these shapes */
    s0 = T * c / C;
    s1 = T * (c + 1) / C;
}

/* a walk over the CTA's stages across all GEMMs: stage s of GEMM g is (tile, kt), kept
 * incrementally (no division per stage) */
struct cursor {
    int g, s, s1, tile, kt, KT;
};
__device__ __forceinline__ void cursor_start(cursor &it, const gdesc *gd, int G, int c, int C) {
    while (it.g < G) {
        range_of(gd[it.g], c, C, it.s, it.s1);
        if (it.s < it.s1) {
            it.KT = gd[it.g].KT, it.tile = it.s / it.KT, it.kt = it.s % it.KT;
            return;
        }
        ++it.g;
    }
}
__device__ __forceinline__ void cursor_next(cursor &it, const gdesc *gd, int G, int c, int C) {
    ++it.s;
    if (++it.kt == it.KT) it.kt = 0, ++it.tile;
    if (it.s >= it.s1) {
        ++it.g;
        cursor_start(it, gd, G, c, C);
    }
}

/* the consumers' fragments into a [128][64] f32 staging tile (warp w: rows 16 w + g, + 8), the
 * accumulators zeroed for the next piece */
__device__ __forceinline__ void stage_frags(float *tile, float (&acc)[8][4], int warp, int lane) {
    const int rr = warp * 16 + (lane >> 2), t4 = lane & 3;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        *reinterpret_cast<float2 *>(tile + rr * M + j * 8 + 2 * t4) = make_float2(acc[j][0], acc[j][1]);
        *reinterpret_cast<float2 *>(tile + (rr + 8) * M + j * 8 + 2 * t4) = make_float2(acc[j][2], acc[j][3]);
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    }
}
/* dst[0, bytes) += the f32 at shared address src, one bulk reduce in its own group */
__device__ __forceinline__ void bulk_add(float *dst, uint32_t src, int bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* one 64-k stage into warpgroup wg's accumulators: weight rows 64 wg ... of the tile at w_s, the
 * 64 token rows at x_s (both in the 128-byte swizzle) */
__device__ __forceinline__ void mma_stage(float (&acc)[8][4], uint32_t w_s, uint32_t x_s, int wg) {
#ifdef PL_HAVE_WGMMA
    const uint64_t da = wgmma_desc_sw128(w_s + wg * 64 * 128), db = wgmma_desc_sw128(x_s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < TBK / 16; ++kk) wgmma_bf16<64>(acc, da + 2 * kk, db + 2 * kk);
    wgmma_commit();
    wgmma_wait<0>();
    wgmma_fence_operands(acc);
#endif
}

/* shared memory of a variant: XS = 0, S stages of weights + x; XS > 0, S weight slots and XS x
 * slots, each ring with its own barriers (so the weights of the next GEMM can fill more of it) */
template <int S, int XS> __host__ __device__ constexpr int ring_bytes() { return XS ? S * WB + XS * XB : S * STG; }

/* CONV: the step between two GEMMs, spread over the CTAs once all sums of GEMM g are in (done[g]
 * = C): rows [N c / C, N (c + 1) / C) of g's f32 sums become GEMM g + 1's bf16 x (row n -> x column
 * n where n < K; SwiGLU of rows i and i + K where N = 2 K, as gate/up -> down) and are zeroed for
 * the next layer's adds; then done[G + g] counts the CTA, and GEMM g + 1's x waits for C of those.
 * A grid-wide hop as a small op of a real step is (no norm's row sums here). */
/* (row pair, token) items of this CTA, CONV_U per thread per round with every load issued
 * before the first store: under the weight stream an L2 hit takes ~1 us, and a rolled loop
 * paid it once per item (run 18) */
constexpr int CONV_U = 12;
/* row pairs [p0, p1) of GEMM d's sums (with their up rows where d is gate/up) into the next
 * GEMM's x, by nt threads (this one: tid), the rows zeroed */
__device__ __forceinline__ void convert_span(const gdesc &d, const gdesc &dn, int p0, int p1, int tid, int nt) {
    const bool glu = d.N == 2 * dn.K;
    const size_t up = (size_t)dn.K * M; /* gate row n -> its up row n + K */
    for (int i0 = p0 * M + tid; i0 < p1 * M; i0 += nt * CONV_U) {
        float g[CONV_U][2], u[CONV_U][2];
#pragma unroll
        for (int j = 0; j < CONV_U; ++j) {
            const int i = i0 + j * nt;
            if (i < p1 * M) {
                const float *o = d.out + (size_t)((i / M) * 2) * M + i % M;
                g[j][0] = __ldcg(o), g[j][1] = __ldcg(o + M);
                if (glu) u[j][0] = __ldcg(o + up), u[j][1] = __ldcg(o + up + M);
            }
        }
#pragma unroll
        for (int j = 0; j < CONV_U; ++j) {
            const int i = i0 + j * nt;
            if (i < p1 * M) {
                const int n = (i / M) * 2, tok = i % M;
                float *o = d.out + (size_t)n * M + tok;
                o[0] = 0.f, o[M] = 0.f;
                float v0 = g[j][0], v1 = g[j][1];
                if (glu) {
                    o[up] = 0.f, o[up + M] = 0.f;
                    v0 = v0 / (1.f + __expf(-v0)) * u[j][0], v1 = v1 / (1.f + __expf(-v1)) * u[j][1];
                }
                if (n < dn.K) *reinterpret_cast<__nv_bfloat162 *>(dn.xb + (size_t)tok * dn.K + n) = __floats2bfloat162_rn(v0, v1);
            }
        }
    }
}
/* CONV's slice of this CTA: an equal share of the row pairs */
__device__ __forceinline__ void convert_rows(const gdesc &d, const gdesc &dn, int c, int C, int tid) {
    const int pairs = (d.N == 2 * dn.K ? dn.K : d.N) / 2;
    convert_span(d, dn, (int)((long long)pairs * c / C), (int)((long long)pairs * (c + 1) / C), tid, CONS);
}
/* TCONV: GEMM g's conversion units (tiles; gate/up: a gate tile with its up tile) */
constexpr int MAXT = 160;
__device__ __forceinline__ int conv_units(const gdesc &d, const gdesc &dn) { return d.N == 2 * dn.K ? d.tiles / 2 : d.tiles; }

template <int S, bool DEP, int RED, int XS = 0, bool CONV = false>
__global__ void __launch_bounds__(NTH, 1) persist_kernel(const gdesc *__restrict__ gd, int G, int *done) {
#ifdef PL_HAVE_WGMMA
    extern __shared__ __align__(128) unsigned char sm[];
    constexpr bool SEP = XS > 0;
    constexpr int NX = SEP ? XS : S; /* x slots */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, c = blockIdx.x, C = gridDim.x;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, full = sb + ring_bytes<S, XS>(), empty = full + S * 8;
    const uint32_t xfull = SEP ? empty + S * 8 : full, xempty = xfull + NX * 8;
    auto wslot = [&](int j) { return sb + j * (SEP ? WB : STG); };
    auto xslot = [&](int j) { return SEP ? sb + S * WB + j * XB : sb + j * STG + WB; };
    const uint32_t stage_out = sb + ring_bytes<S, XS>() + 1024; /* RED >= 2: a piece's [128][64] f32 sums */
    float *stage_out_p = reinterpret_cast<float *>(sm + (stage_out - smem_u32(sm)));
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, CONS);
        if (SEP)
            for (int j = 0; j < XS; ++j) mbar_init(xfull + j * 8, 1), mbar_init(xempty + j * 8, CONS);
        mbar_init_fence();
    }
    __syncthreads();
    if (warp == CONS / 32) { /* the producer */
        if (lane != 0) return;
        const uint64_t wpol = l2_evict_first();
        cursor wi{0, 0, 0, 0, 0, 1};
        cursor_start(wi, gd, G, c, C);
        cursor xi = wi;
        int nw = 0, nx = 0, sw = 0, pw = 1, sx = 0, px = 1; /* counts; the slots and empty parities of the next W and x */
        int ready = 0; /* GEMMs g <= ready may load x */
        while (xi.g < G) {
            if (wi.g < G && (SEP || nw < nx + S)) {
                if (mbar_test(empty + sw * 8, (unsigned)pw)) {
                    mbar_expect_tx(full + sw * 8, SEP ? WB : STG);
                    tma_load_2d(wslot(sw), &gd[wi.g].tw, wi.kt * TBK, wi.tile * TBM, full + sw * 8, wpol);
                    ++nw;
                    if (++sw == S) sw = 0, pw ^= 1;
                    cursor_next(wi, gd, G, c, C);
                }
            }
            if (SEP ? mbar_test(xempty + sx * 8, (unsigned)px) : nx < nw) {
                bool ok = !DEP || xi.g <= ready;
                if (!ok && ld_acquire(done + ((CONV ? G : 0) + xi.g - 1) * CPAD) >= C) {
                    ready = xi.g, ok = true;
                    asm volatile("fence.proxy.async.global;\n" ::: "memory"); /* the outputs seen, before a TMA reads */
                }
                if (ok) {
                    if (SEP) mbar_expect_tx(xfull + sx * 8, XB);
                    tma_load_2d(xslot(sx), &gd[xi.g].tx, xi.kt * TBK, 0, xfull + sx * 8);
                    ++nx;
                    if (++sx == NX) sx = 0, px ^= 1;
                    cursor_next(xi, gd, G, c, C);
                }
            }
        }
        return;
    }
    /* consumers: warpgroup wg takes weight rows 64 wg .. 64 wg + 63 of each tile */
    const int wg = warp >> 2, g8 = lane >> 2, t4 = lane & 3;
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    int slot = 0, ph = 0, xs = 0, xph = 0;
    for (int g = 0; g < G; ++g) {
        const gdesc &d = gd[g];
        int s0, s1;
        range_of(d, c, C, s0, s1);
        int tile = s0 / d.KT, kt = s0 % d.KT;
        for (int s = s0; s < s1; ++s) {
            mbar_wait(full + slot * 8, (unsigned)ph);
            if (SEP) mbar_wait(xfull + xs * 8, (unsigned)xph);
            mma_stage(acc, wslot(slot), xslot(SEP ? xs : slot), wg);
            mbar_arrive(empty + slot * 8);
            if (++slot == S) slot = 0, ph ^= 1;
            if (SEP) {
                mbar_arrive(xempty + xs * 8);
                if (++xs == XS) xs = 0, xph ^= 1;
            }
            const bool tile_end = ++kt == d.KT;
            if (tile_end || s + 1 == s1) { /* the piece ends: add it into the tile's sums */
                const int row0 = tile * TBM + warp * 16 + g8;
                if (RED >= 2) {
                    /* the last bulk reduce has read the staging tile; then every consumer writes its
                     * fragments, and one thread hands the 32 KiB to the TMA unit as one add.
                     * Diagnostics (sums wrong): RED 3 adds half the tile, RED 6 a quarter, RED 5 skips
                     * the staging; RED 7 adds all of it as two bulk reduces of 16 KiB; RED 8 stores it
                     * (no add: what a piece that is a whole tile would cost) */
                    if (RED != 5) {
                        if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                        asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
                        stage_frags(stage_out_p, acc, warp, lane);
                        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                        asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
                    }
                    if (tid == 0) {
                        if (RED == 5) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                        constexpr int bytes = RED == 3 || RED == 7 ? TBM * M * 2 : RED == 6 ? TBM * M : TBM * M * 4;
                        if (RED == 8) { /* a plain bulk store of the same bytes (diagnostic: sums wrong) */
                            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(d.out + (size_t)tile * TBM * M),
                                         "r"(stage_out), "r"(bytes)
                                         : "memory");
                            asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
                        } else
                            for (int h = 0; h < (RED == 7 ? 2 : 1); ++h) bulk_add(d.out + (size_t)tile * TBM * M + h * (bytes / 4), stage_out + h * bytes, bytes);
                    }
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    if (RED == 1) {
                        float *o = d.out + (size_t)row0 * M + j * 8 + 2 * t4;
                        red_add_v2(o, acc[j][0], acc[j][1]);
                        red_add_v2(o + 8 * M, acc[j][2], acc[j][3]);
                    }
                    acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
                }
            }
            if (tile_end) kt = 0, ++tile;
        }
        asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory"); /* every consumer's adds issued */
        if (tid == 0) {
            if (RED >= 2 && (RED != 4 || g == G - 1)) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* the bulk adds performed (RED 4: only at the end, a diagnostic) */
            __threadfence();
            atomicAdd(done + g * CPAD, 1);
        }
        if (CONV && g + 1 < G) {
            if (tid == 0)
                while (ld_acquire(done + g * CPAD) < C) __nanosleep(32);
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            convert_rows(d, gd[g + 1], c, C, tid);
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            if (tid == 0) {
                __threadfence();
                atomicAdd(done + (G + g) * CPAD, 1);
            }
        }
    }
#endif
}

template <int S, bool DEP, int RED, int XS = 0, bool CONV = false>
cudaError_t launch_persist(const gdesc *gd, int G, int *done, int sms, cudaStream_t s) {
    const size_t smem = (size_t)ring_bytes<S, XS>() + 2048 + (RED >= 2 ? TBM * M * 4 : 0);
    cudaError_t e = cudaFuncSetAttribute(persist_kernel<S, DEP, RED, XS, CONV>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    void *args[] = {(void *)&gd, (void *)&G, (void *)&done};
    return cudaLaunchCooperativeKernel((const void *)persist_kernel<S, DEP, RED, XS, CONV>, dim3((unsigned)sms), dim3(NTH), args, smem, s);
}

/* ---- the cluster form: split sums through distributed shared memory ----
 * Clusters of CL CTAs. Each GEMM's pairs are cut into Q = C / CL equal ranges, one per cluster;
 * each tile segment (piece) of a cluster's range is split by k into CL parts, part r for rank r,
 * so the ranks of a cluster finish the same pieces together. At a piece's end each rank leaves
 * its partial tile in its staging buffer, the ranks meet on cluster-scope mbarriers (no
 * cluster-wide thread barrier: the producer lane never stops), rank r adds rows
 * [r 128 / CL, (r + 1) 128 / CL) of every rank's partial through distributed shared memory and
 * sends that share to global memory as one bulk reduce: the adds through L2 shrink by CL. */
__device__ __forceinline__ void piece_part(const gdesc &d, int s0, int s1, int t, int r, int CL, int &ka, int &kb) {
    const int base = t * d.KT, a = (s0 > base ? s0 : base) - base, e = (s1 < base + d.KT ? s1 : base + d.KT) - base, len = e - a;
    ka = a + len * r / CL;
    kb = a + len * (r + 1) / CL;
}
struct pcursor {
    int g, t, k, kend, s0, s1;
};
/* from (g, t) on, the first non-empty part of this rank */
__device__ __forceinline__ void pc_settle(pcursor &it, const gdesc *gd, int G, int q, int Q, int r, int CL) {
    while (it.g < G) {
        const gdesc &d = gd[it.g];
        if (it.s0 < it.s1 && it.t * d.KT < it.s1) {
            int ka, kb;
            piece_part(d, it.s0, it.s1, it.t, r, CL, ka, kb);
            if (ka < kb) {
                it.k = ka, it.kend = kb;
                return;
            }
            ++it.t;
            continue;
        }
        if (++it.g < G) {
            range_of(gd[it.g], q, Q, it.s0, it.s1);
            it.t = it.s0 / gd[it.g].KT;
        }
    }
}
__device__ __forceinline__ void pc_start(pcursor &it, const gdesc *gd, int G, int q, int Q, int r, int CL) {
    it.g = 0;
    range_of(gd[0], q, Q, it.s0, it.s1);
    it.t = it.s0 / gd[0].KT;
    pc_settle(it, gd, G, q, Q, r, CL);
}
__device__ __forceinline__ void pc_next(pcursor &it, const gdesc *gd, int G, int q, int Q, int r, int CL) {
    if (++it.k == it.kend) {
        ++it.t;
        pc_settle(it, gd, G, q, Q, r, CL);
    }
}
__device__ __forceinline__ uint32_t mapa_rank(uint32_t addr, int rank) {
    uint32_t o;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(o) : "r"(addr), "r"(rank));
    return o;
}
__device__ __forceinline__ void mbar_arrive_remote(uint32_t cluster_addr) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, unsigned parity) {
    asm volatile("{\n.reg .pred P;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%0], %1;\n"
                 "@!P bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ float4 ld_cluster_v4(uint32_t cluster_addr) {
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(cluster_addr));
    return v;
}
/* share (local pointer, and its shared address s_addr) += the same floats of every other rank,
 * NT threads, IT float4 each: every remote load issued before the first add */
template <int IT, int NT, int CL> __device__ __forceinline__ void cluster_share_sum(float *share, uint32_t s_addr, int t, int r) {
    float4 v[IT];
#pragma unroll
    for (int i = 0; i < IT; ++i) v[i] = *reinterpret_cast<const float4 *>(share + (t + i * NT) * 4);
#pragma unroll
    for (int p2 = 0; p2 < CL; ++p2)
        if (p2 != r) {
            float4 w[IT];
#pragma unroll
            for (int i = 0; i < IT; ++i) w[i] = ld_cluster_v4(mapa_rank(s_addr + (uint32_t)(t + i * NT) * 16u, p2));
#pragma unroll
            for (int i = 0; i < IT; ++i) v[i].x += w[i].x, v[i].y += w[i].y, v[i].z += w[i].z, v[i].w += w[i].w;
        }
#pragma unroll
    for (int i = 0; i < IT; ++i) *reinterpret_cast<float4 *>(share + (t + i * NT) * 4) = v[i];
}

/* this CTA's pieces of every GEMM in order: piece(g, d, tile, ka, kb) with its part [ka, kb) of
 * the tile's k stages (maybe empty: every rank of a cluster sees every piece), then
 * gemm_end(g) after the GEMM's last */
template <int CL, typename P, typename E>
__device__ __forceinline__ void for_each_piece(const gdesc *gd, int G, int q, int Q, int r, P piece, E gemm_end) {
    for (int g = 0; g < G; ++g) {
        const gdesc &d = gd[g];
        int s0, s1;
        range_of(d, q, Q, s0, s1);
        for (int t = s0 / d.KT; s0 < s1 && t * d.KT < s1; ++t) {
            int ka, kb;
            piece_part(d, s0, s1, t, r, CL, ka, kb);
            piece(g, d, t, ka, kb);
        }
        gemm_end(g);
    }
}
/* after the consumers' last piece of GEMM g: their bulk adds performed, the CTA counted in done[g] */
__device__ __forceinline__ void consumers_done(int *done, int g, int tid) {
    asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
    if (tid == 0) {
        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
        __threadfence();
        atomicAdd(done + g * CPAD, 1);
    }
}
/* one arrival on the same mbarrier of every other rank of the cluster */
template <int CL> __device__ __forceinline__ void arrive_partners(uint32_t bar, int r) {
    for (int p2 = 0; p2 < CL; ++p2)
        if (p2 != r) mbar_arrive_remote(mapa_rank(bar, p2));
}

/* the producer lane of the cluster forms: persist_kernel's two cursors over this rank's parts
 * (weights as slots free up, x once the GEMM before is done) */
template <int S, int CL, bool TCONV = false>
__device__ __forceinline__ void produce_parts(const gdesc *gd, int G, const int *done, uint32_t sb, uint32_t full, uint32_t empty, int q,
                                              int Q, int r) {
    const int C = gridDim.x;
    const uint64_t wpol = l2_evict_first();
    pcursor wi, xi;
    pc_start(wi, gd, G, q, Q, r, CL);
    xi = wi;
    int nw = 0, nx = 0, sw = 0, pw = 1, sx = 0, ready = 0;
    while (xi.g < G) {
        if (wi.g < G && nw < nx + S && mbar_test(empty + sw * 8, (unsigned)pw)) {
            mbar_expect_tx(full + sw * 8, STG);
            tma_load_2d(sb + sw * STG, &gd[wi.g].tw, wi.k * TBK, wi.t * TBM, full + sw * 8, wpol);
            ++nw;
            if (++sw == S) sw = 0, pw ^= 1;
            pc_next(wi, gd, G, q, Q, r, CL);
        }
        if (nx < nw) {
            bool ok = xi.g <= ready;
            if (!ok && ld_acquire(done + ((TCONV ? G : 0) + xi.g - 1) * CPAD) >= (TCONV ? conv_units(gd[xi.g - 1], gd[xi.g]) : C)) {
                ready = xi.g, ok = true;
                asm volatile("fence.proxy.async.global;\n" ::: "memory");
            }
            if (ok) {
                tma_load_2d(sb + sx * STG + WB, &gd[xi.g].tx, xi.k * TBK, 0, full + sx * 8);
                ++nx;
                if (++sx == S) sx = 0;
                pc_next(xi, gd, G, q, Q, r, CL);
            }
        }
    }
}
/* one ring stage into the consumers' accumulators (warpgroup wg: weight rows 64 wg ...), then
 * the slot released */
template <int S>
__device__ __forceinline__ void consume_stage(float (&acc)[8][4], uint32_t sb, uint32_t full, uint32_t empty, int wg, int &slot, int &ph) {
#ifdef PL_HAVE_WGMMA
    mbar_wait(full + slot * 8, (unsigned)ph);
    mma_stage(acc, sb + slot * STG, sb + slot * STG + WB, wg);
    mbar_arrive(empty + slot * 8);
    if (++slot == S) slot = 0, ph ^= 1;
#endif
}

template <int S, int CL>
__global__ void __launch_bounds__(NTH, 1) persist_cl_kernel(const gdesc *__restrict__ gd, int G, int *done) {
#ifdef PL_HAVE_WGMMA
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, C = gridDim.x, Q = C / CL, r = blockIdx.x % CL, q = blockIdx.x / CL;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, full = sb + S * STG, empty = full + S * 8;
    const uint32_t xfull = empty + S * 8, xfree = xfull + 8; /* the partners' partials written / read */
    const uint32_t stage_out = sb + S * STG + 1024;
    float *stage_out_p = reinterpret_cast<float *>(sm + (stage_out - smem_u32(sm)));
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, CONS);
        mbar_init(xfull, CL - 1), mbar_init(xfree, CL - 1);
        mbar_init_fence();
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    if (warp == CONS / 32) { /* the producer */
        if (lane == 0) produce_parts<S, CL>(gd, G, done, sb, full, empty, q, Q, r);
        return;
    }
    const int wg = warp >> 2;
    constexpr int RS = TBM / CL, SHARE = RS * M; /* rows and floats of a rank's share */
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    int slot = 0, ph = 0, pidx = 0;
    for_each_piece<CL>(
        gd, G, q, Q, r,
        [&](int, const gdesc &d, int t, int ka, int kb) {
            for (int k = ka; k < kb; ++k) consume_stage<S>(acc, sb, full, empty, wg, slot, ph);
            /* the piece's end, every rank (an empty part adds zeros) */
            if (pidx > 0) mbar_wait_cluster(xfree, (unsigned)((pidx - 1) & 1)); /* partners done with our staging */
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            stage_frags(stage_out_p, acc, warp, lane);
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            if (tid == 0) arrive_partners<CL>(xfull, r);
            mbar_wait_cluster(xfull, (unsigned)(pidx & 1)); /* the partners' partials are in their staging */
            const int sh0 = r * SHARE;
            cluster_share_sum<SHARE / (4 * CONS), CONS, CL>(stage_out_p + sh0, stage_out + (uint32_t)sh0 * 4u, tid, r);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            if (tid == 0) {
                bulk_add(d.out + (size_t)t * TBM * M + sh0, stage_out + (uint32_t)sh0 * 4u, SHARE * 4);
                arrive_partners<CL>(xfree, r);
            }
            ++pidx;
        },
        [&](int g) { consumers_done(done, g, tid); });
    if (pidx > 0) mbar_wait_cluster(xfree, (unsigned)((pidx - 1) & 1)); /* nobody reads our staging any more */
#endif
}

/* a persistent kernel in clusters of CL, refused (cudaErrorCooperativeLaunchTooLarge) unless
 * every cluster can be resident at once: its ranks wait on each other and on every CTA */
cudaError_t launch_clusters(void (*kern)(const gdesc *, int, int *), int CL, int threads, size_t smem, const gdesc *gd, int G, int *done,
                            int sms, cudaStream_t s) {
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)(sms / CL * CL));
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)CL, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    e = cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg);
    if (e != cudaSuccess) return e;
    if (clusters < sms / CL) return cudaErrorCooperativeLaunchTooLarge;
    return cudaLaunchKernelEx(&cfg, kern, gd, G, done);
}
/* ---- OWN: x made by x-producer warps from the sums, stage by stage ----
 * No conversion step and no bf16 x buffer between GEMMs: eight x-writer warps walk the CTA's
 * stages like the producer lane and write each stage's x (64 tokens x 64 k, bf16, 128-byte
 * swizzle) straight into the ring from the GEMM before's f32 sums (SwiGLU of gate and up rows
 * where the GEMM before is gate/up); GEMM 0 copies its fixed bf16 x. A stage's full barrier
 * counts the producer lane's weights and the 256 x writers. One grid-wide meeting per boundary
 * (done[g]: every CTA's sums of g performed). The sums are not zeroed for the next layer here
 * (timing only: that would add their store volume again). Two stages of x in flight per
 * writer: the loads of stage n + 1 go out before stage n is stored. */
constexpr int XP_T = 256, NTH_O = CONS + XP_T + 32, XP_ITEMS = 64 * 8 / XP_T; /* (token, 8-k chunk) items per writer */

struct xregs {
    float v[XP_ITEMS][8], u[XP_ITEMS][8];
};
/* stage (g, kt)'s x values for this writer: items xt + XP_T j = (token, chunk) */
__device__ __forceinline__ void x_load(xregs &r, const gdesc *gd, int g, int kt, int xt) {
    const gdesc &d = gd[g];
#pragma unroll
    for (int j = 0; j < XP_ITEMS; ++j) {
        const int item = xt + XP_T * j, tok = item % M, ch = item / M, k0 = kt * TBK + ch * 8;
        if (g == 0) { /* the fixed input: 8 bf16 as 4 packed pairs in v[j][0..3] */
            const uint4 q = __ldcg(reinterpret_cast<const uint4 *>(d.xb + (size_t)tok * d.K + k0));
            r.v[j][0] = __uint_as_float(q.x), r.v[j][1] = __uint_as_float(q.y), r.v[j][2] = __uint_as_float(q.z), r.v[j][3] = __uint_as_float(q.w);
            continue;
        }
        const gdesc &dp = gd[g - 1];
        const bool glu = dp.N == 2 * d.K;
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            r.v[j][e] = __ldcg(dp.out + (size_t)(k0 + e) * M + tok);
            if (glu) r.u[j][e] = __ldcg(dp.out + (size_t)(k0 + e + d.K) * M + tok);
        }
    }
}
__device__ __forceinline__ void x_store(const xregs &r, const gdesc *gd, int g, uint32_t xs, int xt) {
    const bool glu = g > 0 && gd[g - 1].N == 2 * gd[g].K;
#pragma unroll
    for (int j = 0; j < XP_ITEMS; ++j) {
        const int item = xt + XP_T * j, tok = item % M, ch = item / M;
        uint32_t w[4];
        if (g == 0) {
#pragma unroll
            for (int e = 0; e < 4; ++e) w[e] = __float_as_uint(r.v[j][e]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float a = r.v[j][2 * e], b = r.v[j][2 * e + 1];
                if (glu) a = a / (1.f + __expf(-a)) * r.u[j][2 * e], b = b / (1.f + __expf(-b)) * r.u[j][2 * e + 1];
                w[e] = pack_bf16(a, b);
            }
        }
        const uint32_t addr = xs + (uint32_t)(tok * 128 + ((ch ^ (tok & 7)) << 4));
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
    }
}

template <int S>
__global__ void __launch_bounds__(NTH_O, 1) persist_own_kernel(const gdesc *__restrict__ gd, int G, int *done) {
#ifdef PL_HAVE_WGMMA
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, c = blockIdx.x, C = gridDim.x;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, full = sb + S * STG, empty = full + S * 8;
    const uint32_t stage_out = sb + S * STG + 1024;
    float *stage_out_p = reinterpret_cast<float *>(sm + (stage_out - smem_u32(sm)));
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1 + XP_T), mbar_init(empty + j * 8, CONS);
        mbar_init_fence();
    }
    __syncthreads();
    if (warp == (CONS + XP_T) / 32) { /* the producer lane: weights only */
        if (lane != 0) return;
        const uint64_t wpol = l2_evict_first();
        cursor wi{0, 0, 0, 0, 0, 1};
        cursor_start(wi, gd, G, c, C);
        int sw = 0, pw = 1;
        while (wi.g < G) {
            mbar_wait(empty + sw * 8, (unsigned)pw);
            mbar_expect_tx(full + sw * 8, WB);
            tma_load_2d(sb + sw * STG, &gd[wi.g].tw, wi.kt * TBK, wi.tile * TBM, full + sw * 8, wpol);
            if (++sw == S) sw = 0, pw ^= 1;
            cursor_next(wi, gd, G, c, C);
        }
        return;
    }
    if (warp >= CONS / 32) { /* the x writers */
        const int xt = tid - CONS;
        cursor xi{0, 0, 0, 0, 0, 1};
        cursor_start(xi, gd, G, c, C);
        int sx = 0, px = 1, ready = 0;
        xregs r[2];
        auto dep = [&](int g) { /* GEMM g's x may be read: every CTA's sums of g - 1 are in */
            if (g <= ready) return;
            if (xt == 0)
                while (ld_acquire(done + (g - 1) * CPAD) < C) __nanosleep(32);
            asm volatile("bar.sync 3, %0;\n" ::"n"(XP_T) : "memory");
            ready = g;
        };
        if (xi.g < G) {
            dep(xi.g);
            x_load(r[0], gd, xi.g, xi.kt, xt);
        }
        while (xi.g < G) {
#pragma unroll
            for (int h = 0; h < 2; ++h) { /* r[h] holds stage xi; load the next into r[h ^ 1] first */
                if (xi.g >= G) break;
                cursor nx = xi;
                cursor_next(nx, gd, G, c, C);
                const int g = xi.g;
                if (nx.g < G && nx.g == g) x_load(r[h ^ 1], gd, nx.g, nx.kt, xt);
                mbar_wait(empty + sx * 8, (unsigned)px);
                x_store(r[h], gd, g, sb + sx * STG + WB, xt);
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                mbar_arrive(full + sx * 8);
                if (++sx == S) sx = 0, px ^= 1;
                if (nx.g < G && nx.g != g) { /* the next GEMM's first stage: after its dependency */
                    dep(nx.g);
                    x_load(r[h ^ 1], gd, nx.g, nx.kt, xt);
                }
                xi = nx;
            }
        }
        return;
    }
    /* consumers: persist_kernel's with bulk-reduce sums */
    const int wg = warp >> 2;
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    int slot = 0, ph = 0;
    for_each_piece<1>(
        gd, G, c, C, 0,
        [&](int, const gdesc &d, int t, int ka, int kb) {
            for (int k = ka; k < kb; ++k) consume_stage<S>(acc, sb, full, empty, wg, slot, ph);
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            stage_frags(stage_out_p, acc, warp, lane);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
            if (tid == 0) bulk_add(d.out + (size_t)t * TBM * M, stage_out, TBM * M * 4);
        },
        [&](int g) { consumers_done(done, g, tid); });
#endif
}
template <int S> cudaError_t launch_persist_own(const gdesc *gd, int G, int *done, int sms, cudaStream_t s) {
    return launch_clusters(persist_own_kernel<S>, 1, NTH_O, (size_t)S * STG + 2048 + TBM * M * 4, gd, G, done, sms, s);
}

template <int S, int CL> cudaError_t launch_persist_cl(const gdesc *gd, int G, int *done, int sms, cudaStream_t s) {
    return launch_clusters(persist_cl_kernel<S, CL>, CL, NTH, (size_t)S * STG + 2048 + TBM * M * 4, gd, G, done, sms, s);
}

/* ---- sums off the consumers' path ----
 * The same walk (clusters of CL, CL = 1: none), with a fourth kind of warp: consumers leave a
 * piece's partial in one of two staging tiles and go on at once; four reducer warps add it
 * (CL > 1: the partners' shares through distributed shared memory first) and send it as one
 * bulk reduce, count the GEMM done after its last piece, and free the staging tile. */
constexpr int RED_T = 128, NTH_A = CONS + RED_T + 32;

/* TCONV (CL = 1): each tile's sums become the next GEMM's x as soon as they are complete: the
 * reducers of the tile's last piece (a per-tile count against the contributors the host
 * counted, after `done`: tcnt[G][MAXT], then need[G][MAXT]) convert its rows; the next GEMM's x
 * waits for all of them. One grid-wide meeting per boundary instead of two. */
template <int S, int CL, bool TCONV = false>
__global__ void __launch_bounds__(NTH_A, 1) persist_async_kernel(const gdesc *__restrict__ gd, int G, int *done) {
#ifdef PL_HAVE_WGMMA
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, C = gridDim.x, Q = C / CL, r = blockIdx.x % CL, q = blockIdx.x / CL;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, full = sb + S * STG, empty = full + S * 8;
    const uint32_t sfull = empty + S * 8, sfree = sfull + 16, xfull = sfree + 16, xfree = xfull + 16; /* two of each */
    const uint32_t stg = sb + S * STG + 1024;                                                         /* two [128][64] f32 tiles */
    float *stg_p = reinterpret_cast<float *>(sm + (stg - smem_u32(sm)));
    constexpr int TILE_F = TBM * M, RS = TBM / CL, SHARE = RS * M;
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, CONS);
        for (int b = 0; b < 2; ++b) {
            mbar_init(sfull + b * 8, CONS), mbar_init(sfree + b * 8, 1);
            if (CL > 1) mbar_init(xfull + b * 8, CL - 1), mbar_init(xfree + b * 8, CL - 1);
        }
        mbar_init_fence();
    }
    if (CL > 1) asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    else __syncthreads();
    if (warp == (CONS + RED_T) / 32) { /* the producer */
        if (lane == 0) produce_parts<S, CL, TCONV>(gd, G, done, sb, full, empty, q, Q, r);
        return;
    }
    if (warp >= CONS / 32) { /* the reducers */
        const int rt = tid - CONS;
        int b = 0, u0 = 0, u1 = 0;
        int *tcnt = done + 2 * G * CPAD, *need = tcnt + G * MAXT;
        __shared__ int last_unit;
        for_each_piece<CL>(
            gd, G, q, Q, r,
            [&](int g, const gdesc &d, int t, int, int) {
                const int u = b ? u1 : u0;
                const uint32_t tile_s = stg + (uint32_t)b * TILE_F * 4u;
                float *tile_p = stg_p + b * TILE_F;
                mbar_wait(sfull + b * 8, (unsigned)(u & 1)); /* the consumers' partial is in */
                int sh0 = 0, nbytes = TILE_F * 4;
                if (CL > 1) {
                    if (rt == 0) arrive_partners<CL>(xfull + b * 8, r);
                    mbar_wait_cluster(xfull + b * 8, (unsigned)(u & 1));
                    sh0 = r * SHARE, nbytes = SHARE * 4;
                    cluster_share_sum<SHARE / (4 * RED_T), RED_T, CL>(tile_p + sh0, tile_s + (uint32_t)sh0 * 4u, rt, r);
                }
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                asm volatile("bar.sync 2, %0;\n" ::"n"(RED_T) : "memory");
                if (rt == 0) {
                    bulk_add(d.out + (size_t)t * TBM * M + sh0, tile_s + (uint32_t)sh0 * 4u, nbytes);
                    if (CL > 1) arrive_partners<CL>(xfree + b * 8, r);
                    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                    if (CL > 1) mbar_wait_cluster(xfree + b * 8, (unsigned)(u & 1)); /* the partners have read ours */
                    mbar_arrive(sfree + b * 8);
                }
                if (b) ++u1;
                else ++u0;
                b ^= 1;
                if (TCONV && g + 1 < G) {
                    const gdesc &dn = gd[g + 1];
                    const int units = conv_units(d, dn), unit = t % units;
                    if (rt == 0) {
                        asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* our adds performed */
                        __threadfence();
                        last_unit = atomicAdd(tcnt + g * MAXT + unit, 1) == need[g * MAXT + unit] - 1;
                        __threadfence();
                    }
                    asm volatile("bar.sync 2, %0;\n" ::"n"(RED_T) : "memory");
                    if (last_unit) { /* every contribution to this unit is in: its rows become x */
                        convert_span(d, dn, unit * TBM / 2, (unit + 1) * TBM / 2, rt, RED_T);
                        asm volatile("bar.sync 2, %0;\n" ::"n"(RED_T) : "memory");
                        if (rt == 0) {
                            __threadfence();
                            atomicAdd(done + (G + g) * CPAD, 1);
                        }
                    }
                }
            },
            [&](int g) {
                if (rt == 0) { /* this CTA's sums of GEMM g performed */
                    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
                    __threadfence();
                    atomicAdd(done + g * CPAD, 1);
                }
            });
        return;
    }
    const int wg = warp >> 2;
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    int slot = 0, ph = 0, b = 0, u0 = 0, u1 = 0;
    for_each_piece<CL>(
        gd, G, q, Q, r,
        [&](int, const gdesc &, int, int ka, int kb) {
            for (int k = ka; k < kb; ++k) consume_stage<S>(acc, sb, full, empty, wg, slot, ph);
            const int u = b ? u1 : u0;
            mbar_wait(sfree + b * 8, (unsigned)((u & 1) ^ 1)); /* the reducers are done with this tile */
            stage_frags(stg_p + b * TILE_F, acc, warp, lane);
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive(sfull + b * 8);
            if (b) ++u1;
            else ++u0;
            b ^= 1;
        },
        [](int) {});
    /* no barrier at the end: a CTA's reducers leave only once the partners have read its tiles */
#endif
}

template <int S, int CL, bool TCONV = false> cudaError_t launch_persist_async(const gdesc *gd, int G, int *done, int sms, cudaStream_t s) {
    return launch_clusters(persist_async_kernel<S, CL, TCONV>, CL, NTH_A, (size_t)S * STG + 2048 + 2 * TBM * M * 4, gd, G, done, sms, s);
}

struct variant {
    const char *name;
    cudaError_t (*fn)(const gdesc *, int, int *, int, cudaStream_t);
    bool checked; /* its sums are right (not a diagnostic that skips or trims them) and its x the fixed input: compared with the backend */
};
/* the x-writing variants (CONV, TCONV, OWN) overwrite the fixed x buffers: they stay last, after
 * every checked one */
const variant variants[] = {
    {"8 stages, bulk adds", launch_persist<8, true, 2>, true},
    {"clusters of 2, DSMEM sums", launch_persist_cl<8, 2>, true},
    {"clusters of 4, DSMEM sums", launch_persist_cl<8, 4>, true},
    {"6 st., sums by reducer warps", launch_persist_async<6, 1>, true},
    {"6 st., reducers, pairs DSMEM", launch_persist_async<6, 2>, true},
    {"5 st., reducers, quads DSMEM", launch_persist_async<5, 4>, true},
    {"w 10 + x 4, bulk adds", launch_persist<10, true, 2, 4>, true},
    {"w 11 + x 2, bulk adds", launch_persist<11, true, 2, 2>, true},
    {"w 9 + x 6, bulk adds", launch_persist<9, true, 2, 6>, true},
    {"8 stages, red.v2 adds", launch_persist<8, true, 1>, true},
    {"8 st., bulk, no waits (diag)", launch_persist<8, false, 2>, true},
    {"8 stages, no sums (diag)", launch_persist<8, true, 0>, false},
    {"w 10 + x 4, no sums (diag)", launch_persist<10, true, 0, 4>, false},
    {"8 stages, neither (diag)", launch_persist<8, false, 0>, false},
    {"bulk, half the adds (diag)", launch_persist<8, true, 3>, false},
    {"bulk, unwaited (diag)", launch_persist<8, true, 4>, false},
    {"bulk, no staging (diag)", launch_persist<8, true, 5>, false},
    {"bulk, a quarter (diag)", launch_persist<8, true, 6>, false},
    {"bulk as 2 x 16 KiB", launch_persist<8, true, 7>, true},
    {"bulk stores, no adds (diag)", launch_persist<8, true, 8>, false},
    {"bulk adds + x from the sums", launch_persist<8, true, 2, 0, true>, false},
    {"reducers + x per tile", launch_persist_async<6, 1, true>, false},
    {"x writers from the sums", launch_persist_own<8>, false},
};

} // namespace

int main() {
    cudaStream_t s;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    const int L = 36, H = 2560, Q = 6144, A = 4096, I = 9728, G = 4 * L;
    struct shp { const char *name; int n, k, xin; } shapes[4] = {{"qkv", Q, H, 0}, {"o", H, A, 1}, {"gate_up", 2 * I, H, 0}, {"down", H, I, 2}};
    std::vector<__nv_bfloat16 *> W(G);
    std::vector<float *> out(G);
    std::vector<gdesc> hd(G);
    double wbytes = 0;
    __nv_bfloat16 *xin[3];
    const int xk[3] = {H, A, I};
    for (int i = 0; i < 3; i++) {
        CK(cudaMalloc(&xin[i], (size_t)M * xk[i] * 2));
        fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(xin[i]), (size_t)M * xk[i] / 2, 1000u + i);
    }
    for (int g = 0; g < G; g++) {
        const shp &p = shapes[g % 4];
        const size_t n = (size_t)p.n * p.k;
        CK(cudaMalloc(&W[g], n * 2));
        fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(W[g]), n / 2, (uint32_t)(g + 1));
        wbytes += n * 2.0;
        CK(cudaMalloc(&out[g], (size_t)p.n * M * 4));
        gdesc &d = hd[g];
        memset(&d, 0, sizeof d);
        if (!pl_cuda_tmap_2d_bf16(&d.tw, W[g], (uint64_t)p.k, (uint64_t)p.n, (uint64_t)p.k * 2, TBK, TBM) ||
            !pl_cuda_tmap_2d_bf16(&d.tx, xin[p.xin], (uint64_t)p.k, (uint64_t)M, (uint64_t)p.k * 2, TBK, M)) {
            fprintf(stderr, "tensor map refused\n");
            return 1;
        }
        d.out = out[g], d.xb = xin[p.xin], d.N = p.n, d.K = p.k, d.tiles = p.n / TBM, d.KT = p.k / TBK;
    }
    gdesc *dd, *dr;
    int *done;
    CK(cudaMalloc(&dd, sizeof(gdesc) * G));
    CK(cudaMemcpy(dd, hd.data(), sizeof(gdesc) * G, cudaMemcpyHostToDevice));
    /* the same chain with one f32 output per projection kind, reused by every layer (the
     * backend's way: its outputs stay in L2); the sums are then not checked */
    float *outr[4];
    std::vector<gdesc> hr4 = hd;
    for (int p = 0; p < 4; p++) CK(cudaMalloc(&outr[p], (size_t)shapes[p].n * M * 4));
    for (int g = 0; g < G; g++) hr4[g].out = outr[g % 4];
    CK(cudaMalloc(&dr, sizeof(gdesc) * G));
    CK(cudaMemcpy(dr, hr4.data(), sizeof(gdesc) * G, cudaMemcpyHostToDevice));
    /* counters: sums done, then (CONV) next x written; TCONV's per-tile counts and the
     * contributors each tile waits for */
    const size_t ncnt = (size_t)2 * G * CPAD + (size_t)G * MAXT;
    CK(cudaMalloc(&done, sizeof(int) * (ncnt + (size_t)G * MAXT)));
    {
        std::vector<int> need((size_t)G * MAXT, 0);
        for (int g = 0; g + 1 < G; g++) {
            const gdesc &d = hd[g], &dn = hd[g + 1];
            const int units = d.N == 2 * dn.K ? d.tiles / 2 : d.tiles, T = d.tiles * d.KT;
            for (int c = 0; c < sms; c++) { /* the tiles CTA c's range touches */
                const int s0 = (int)((long long)T * c / sms), s1 = (int)((long long)T * (c + 1) / sms);
                for (int t = s0 / d.KT; s0 < s1 && t * d.KT < s1; t++) need[(size_t)g * MAXT + t % units]++;
            }
        }
        CK(cudaMemcpy(done + ncnt, need.data(), sizeof(int) * need.size(), cudaMemcpyHostToDevice));
    }
    /* the reference: the backend's kernel per GEMM, PDL, in one graph */
    const int nk[4][2] = {{Q, H}, {H, A}, {2 * I, H}, {H, I}};
    pl_cuda_gemv_ws ws = chain_ws(sms, nk, 4, (size_t)1 << 20);
    __nv_bfloat16 *yref[4];
    for (int p = 0; p < 4; p++) CK(cudaMalloc(&yref[p], (size_t)M * shapes[p].n * 2));
    auto ref_chain = [&]() {
        for (int g = 0; g < G; g++) {
            const shp &p = shapes[g % 4];
            CK((cudaError_t)pl_cuda_gemv_bf16(W[g], xin[p.xin], M, p.n, p.k, yref[g % 4], 0, PL_CUDA_GEMV_TILE, &ws, s));
        }
    };
    /* check: layer 0's four GEMMs, persistent sums against the backend */
    for (int p = 0; p < 4; p++) CK((cudaError_t)pl_cuda_gemv_bf16(W[p], xin[shapes[p].xin], M, shapes[p].n, shapes[p].k, yref[p], 0, PL_CUDA_GEMV_TILE, &ws, s));
    CK(cudaStreamSynchronize(s));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    bool fail = false;
    const int NV = (int)(sizeof variants / sizeof variants[0]);
    std::vector<float> tv(NV), tvr(NV);
    for (int v = 0; v < NV; v++) {
        CK(cudaMemsetAsync(done, 0, sizeof(int) * ncnt, s));
        const cudaError_t le = variants[v].fn(dd, G, done, sms, s); /* a launch the card refuses is skipped */
        if (le != cudaSuccess) {
            cudaGetLastError();
            printf("skip %-26s %s\n", variants[v].name, cudaGetErrorString(le));
            tv[v] = tvr[v] = NAN;
            continue;
        }
        CK(cudaStreamSynchronize(s));
        std::vector<float> t;
        for (int r = 0; r < 7; r++) {
            for (int g = 0; g < G; g++) CK(cudaMemsetAsync(out[g], 0, (size_t)hd[g].N * M * 4, s));
            CK(cudaMemsetAsync(done, 0, sizeof(int) * ncnt, s));
            t.push_back(time_runs(s, e0, e1, 1, [&] { CK(variants[v].fn(dd, G, done, sms, s)); }));
        }
        tv[v] = median(t);
        std::vector<float> tr;
        for (int r = 0; r < 7; r++) {
            for (int p = 0; p < 4; p++) CK(cudaMemsetAsync(outr[p], 0, (size_t)shapes[p].n * M * 4, s));
            CK(cudaMemsetAsync(done, 0, sizeof(int) * ncnt, s));
            tr.push_back(time_runs(s, e0, e1, 1, [&] { CK(variants[v].fn(dr, G, done, sms, s)); }));
        }
        tvr[v] = median(tr);
        if (variants[v].checked) { /* compare layer 0 with the backend */
            for (int p = 0; p < 4; p++) {
                const int N = shapes[p].n;
                std::vector<float> ho((size_t)N * M);
                std::vector<uint16_t> hr((size_t)M * N);
                CK(cudaMemcpy(ho.data(), out[p], ho.size() * 4, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(hr.data(), yref[p], hr.size() * 2, cudaMemcpyDeviceToHost));
                float md = 0, mr = 0;
                for (int tok = 0; tok < M; tok++)
                    for (int row = 0; row < N; row++) {
                        uint32_t u = (uint32_t)hr[(size_t)tok * N + row] << 16;
                        float r;
                        memcpy(&r, &u, 4);
                        /* seven timed runs added into zeroed sums: the last run's sums */
                        md = fmaxf(md, fabsf(ho[(size_t)row * M + tok] - r)), mr = fmaxf(mr, fabsf(r));
                    }
                const bool bad = !(md <= 1e-2f * mr);
                fail |= bad;
                printf("check %-26s %-8s max|diff| / max|ref| = %.2e%s\n", variants[v].name, shapes[p].name, md / mr, bad ? "  FAILED" : "");
            }
        }
    }
    const float tref = graph_ms(s, e0, e1, ref_chain);
    const double ideal = wbytes / (copy * 1e9) * 1e3;
    printf("\n36 layers x 4 projections at %d rows, %.2f GB of weights; ideal at the copy rate %.3f ms\n", M, wbytes / 1e9, ideal);
    printf("%-28s %9s %9s %8s %14s %9s\n", "variant", "ms", "x ideal", "TB/s", "reused out, ms", "x ideal");
    printf("%-28s %9.3f %9.2f %8.2f\n", "backend chain (PDL graph)", tref, tref / ideal, wbytes / (tref * 1e-3) / 1e12);
    for (int v = 0; v < NV; v++)
        printf("%-28s %9.3f %9.2f %8.2f %14.3f %9.2f\n", variants[v].name, tv[v], tv[v] / ideal, wbytes / (tv[v] * 1e-3) / 1e12, tvr[v],
               tvr[v] / ideal);
    return fail ? 1 : 0;
}
