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
 * Measured (PERF.md, twenty-eighth session, runs 6-9): the stream alone 0.95x of the ideal at
 * the copy rate; with the waits 1.08x; with bulk-reduce sums and waits 1.39x, against 1.45x for
 * the backend's chain; red.v2 sums 1.46x; separate rings no better. The split sums' completion
 * between one GEMM and the next is what costs.
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

/* one GEMM of the chain: tensor maps of W [N][K] (boxes 128 x 64) and x [64][K] (64 x 64) */
struct gdesc {
    CUtensorMap tw, tx;
    float *out; /* [N][64] f32 sums */
    int N, K, tiles, KT;
};

__device__ __forceinline__ bool mbar_test(uint32_t bar, unsigned parity) {
    uint32_t ok;
    asm volatile("{\n.reg .pred P;\nmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok != 0;
}
__device__ __forceinline__ int ld_acquire(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
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

/* shared memory of a variant: XS = 0, S stages of weights + x; XS > 0, S weight slots and XS x
 * slots, each ring with its own barriers (so the weights of the next GEMM can fill more of it) */
template <int S, int XS> __host__ __device__ constexpr int ring_bytes() { return XS ? S * WB + XS * XB : S * STG; }

template <int S, bool DEP, int RED, int XS = 0>
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
    const uint32_t stage_out = sb + ring_bytes<S, XS>() + 1024; /* RED == 2: a piece's [128][64] f32 sums */
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
                if (!ok && ld_acquire(done + xi.g - 1) >= C) {
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
            const uint64_t da = wgmma_desc_sw128(wslot(slot) + wg * 64 * 128), db = wgmma_desc_sw128(xslot(SEP ? xs : slot));
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < TBK / 16; ++kk) wgmma_bf16<64>(acc, da + 2 * kk, db + 2 * kk);
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence_operands(acc);
            mbar_arrive(empty + slot * 8);
            if (++slot == S) slot = 0, ph ^= 1;
            if (SEP) {
                mbar_arrive(xempty + xs * 8);
                if (++xs == XS) xs = 0, xph ^= 1;
            }
            const bool tile_end = ++kt == d.KT;
            if (tile_end || s + 1 == s1) { /* the piece ends: add it into the tile's sums */
                const int row0 = tile * TBM + warp * 16 + g8;
                if (RED == 2) {
                    /* the last bulk reduce has read the staging tile; then every consumer writes its
                     * fragments, and one thread hands the 32 KiB to the TMA unit as one add */
                    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                    asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
                    const int r = warp * 16 + g8;
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        *reinterpret_cast<float2 *>(stage_out_p + r * M + j * 8 + 2 * t4) = make_float2(acc[j][0], acc[j][1]);
                        *reinterpret_cast<float2 *>(stage_out_p + (r + 8) * M + j * 8 + 2 * t4) = make_float2(acc[j][2], acc[j][3]);
                    }
                    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                    asm volatile("bar.sync 1, %0;\n" ::"n"(CONS) : "memory");
                    if (tid == 0) {
                        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(d.out + (size_t)tile * TBM * M),
                                     "r"(stage_out), "n"(TBM * M * 4)
                                     : "memory");
                        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
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
            if (RED == 2) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* the bulk adds performed */
            __threadfence();
            atomicAdd(done + g, 1);
        }
    }
#endif
}

template <int S, bool DEP, int RED, int XS = 0> cudaError_t launch_persist(const gdesc *gd, int G, int *done, int sms, cudaStream_t s) {
    const size_t smem = (size_t)ring_bytes<S, XS>() + 2048 + (RED == 2 ? TBM * M * 4 : 0);
    cudaError_t e = cudaFuncSetAttribute(persist_kernel<S, DEP, RED, XS>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    void *args[] = {(void *)&gd, (void *)&G, (void *)&done};
    return cudaLaunchCooperativeKernel((const void *)persist_kernel<S, DEP, RED, XS>, dim3((unsigned)sms), dim3(NTH), args, smem, s);
}

struct variant {
    const char *name;
    cudaError_t (*fn)(const gdesc *, int, int *, int, cudaStream_t);
};
const variant variants[] = {
    {"8 stages, bulk adds", launch_persist<8, true, 2>},
    {"w 10 + x 4, bulk adds", launch_persist<10, true, 2, 4>},
    {"w 11 + x 2, bulk adds", launch_persist<11, true, 2, 2>},
    {"w 9 + x 6, bulk adds", launch_persist<9, true, 2, 6>},
    {"8 stages, red.v2 adds", launch_persist<8, true, 1>},
    {"8 st., bulk, no waits (diag)", launch_persist<8, false, 2>},
    {"8 stages, no sums (diag)", launch_persist<8, true, 0>},
    {"w 10 + x 4, no sums (diag)", launch_persist<10, true, 0, 4>},
    {"8 stages, neither (diag)", launch_persist<8, false, 0>},
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
    size_t outb = 0;
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
        outb += (size_t)p.n * M * 4;
        gdesc &d = hd[g];
        memset(&d, 0, sizeof d);
        if (!pl_cuda_tmap_2d_bf16(&d.tw, W[g], (uint64_t)p.k, (uint64_t)p.n, (uint64_t)p.k * 2, TBK, TBM) ||
            !pl_cuda_tmap_2d_bf16(&d.tx, xin[p.xin], (uint64_t)p.k, (uint64_t)M, (uint64_t)p.k * 2, TBK, M)) {
            fprintf(stderr, "tensor map refused\n");
            return 1;
        }
        d.out = out[g], d.N = p.n, d.K = p.k, d.tiles = p.n / TBM, d.KT = p.k / TBK;
    }
    gdesc *dd;
    int *done;
    CK(cudaMalloc(&dd, sizeof(gdesc) * G));
    CK(cudaMemcpy(dd, hd.data(), sizeof(gdesc) * G, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&done, sizeof(int) * G));
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
    std::vector<float> tv(NV);
    for (int v = 0; v < NV; v++) {
        std::vector<float> t;
        for (int r = 0; r < 7; r++) {
            for (int g = 0; g < G; g++) CK(cudaMemsetAsync(out[g], 0, (size_t)hd[g].N * M * 4, s));
            CK(cudaMemsetAsync(done, 0, sizeof(int) * G, s));
            t.push_back(time_runs(s, e0, e1, 1, [&] { CK(variants[v].fn(dd, G, done, sms, s)); }));
        }
        tv[v] = median(t);
        if (v <= 5) { /* sums complete: compare layer 0 with the backend */
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
    printf("%-28s %9s %9s %8s\n", "variant", "ms", "x ideal", "TB/s");
    printf("%-28s %9.3f %9.2f %8.2f\n", "backend chain (PDL graph)", tref, tref / ideal, wbytes / (tref * 1e-3) / 1e12);
    for (int v = 0; v < NV; v++)
        printf("%-28s %9.3f %9.2f %8.2f\n", variants[v].name, tv[v], tv[v] / ideal, wbytes / (tv[v] * 1e-3) / 1e12);
    (void)outb;
    return fail ? 1 : 0;
}
