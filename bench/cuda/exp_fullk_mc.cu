/* Experiment (thirty-third session): a 64-row projection over all of K whose x is shared by the
 * CTAs of a cluster through TMA multicast.
 *
 * Why: at batch 64 two of a layer's six kernels are the add + RMSNorms that add the o and down
 * projections' K-split partial planes (5-6 us each from their wait in the stamped step, plus a
 * kernel hand-off each; PERF.md, thirty-first to thirty-third sessions). A projection over all
 * of K (pl_cuda_fullk_bf16: one CTA per SM owns N-tile columns, no partials) leaves a complete y,
 * but every CTA then reads all of x from L2 (8 KiB a stage beside 3-6 KiB of weights), which held
 * it at ~20 GB/s a CTA. With clusters of CS CTAs, each CTA loads 64 / CS rows of a stage's x box
 * and multicasts them to all CS, so L2 serves x once per cluster. The question: does a full-K
 * projection with shared x stream near the copy rate? If so, o and (with its rms moved into the
 * consumer) the norms could go.
 *
 * - CTA c owns weight rows [c NT, (c + 1) NT) over all of K (wgmma m64nNTk16, A = the 64 x rows,
 *   B = the weight tile), one consumer warpgroup, one producer lane (as src/cuda/mlp.cu).
 * - x slot q % XS of every CTA of a cluster is filled by all CS producers (a slice each); a
 *   producer refills its slice only when every consumer of the cluster released the slot (a
 *   cluster-scope arrive on each CTA's xempty barrier, 4 warps x CS).
 * - Cluster barriers after the barriers' init and before the exit (no CTA leaves while others
 *   may still write into its shared memory).
 *
 * Measured on the H200 (PERF.md, thirty-third session, runs 7-9): the same bits as the library's
 * full-K kernel, but 4x slower at CS 2 (qkv 52 against 13.5 us a layer) whether each warp or one
 * thread per CTA releases a slot, with or without PDL, with 6 or 12 x slots; clusters of 4 and 8
 * do not all fit at once (two waves). The cluster launch alone (REL 2) costs ~20% (16.4 us); rank
 * 0 multicasting every slice (REL 3) 37.5.
 * Thirty-fourth session (runs 1-3): ncu put 55% of the CS 2 kernel's warp cycles on "waiting on a
 * memory barrier", the cluster-scope release of each remote arrive. With the default CTA-scope
 * release (CSCOPE false) CS 2 takes 13.9-14.0 us, level with CS 1 (13.5) and above the library's
 * full-K kernel (12.4); deeper x rings (up to 16 + 10 and 12 + 12 slots) 13.3-14.3; o 18.8-21.7
 * against 12.4 for the wide kernel + sum. Sharing x across a cluster does not make a full-K
 * projection stream faster: what holds it is not L2's x traffic.
 * REL (what a slot's x release and refill are): 0 each CTA multicasts a slice, each warp releases
 * the slot in every CTA; 1 the same, one release per CTA after a named barrier; 2 a cluster launch
 * whose CTAs load their own x (no multicast, local releases: the cost of the cluster alone); 3 rank 0
 * multicasts every slice, released to it by every warp of the cluster.
 *
 * Against, in the same run: the library's full-K kernel (pl_cuda_fullk_bf16, its 113 KiB ring),
 * for the o shape the wide kernel (pl_cuda_wide_bf16, K-split partials) and the partials' sum
 * kernel, and this kernel with CS = 1 (no multicast). 36 layers of distinct weights per graph,
 * PDL launches, median of 20 replays; y checked against the library's full-K output.
 *
 * Not part of the build. On a GPU machine, after the CMake build in build-gpu:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda \
 *       bench/cuda/exp_fullk_mc.cu build-gpu/libpagellm.a -o exp_fullk_mc
 *   ./exp_fullk_mc [NAME]     (NAME: only the variants whose name contains it; EXP_REP=N replays)
 */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/mlp_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/tma_cuda.h"
#include "exp_util.cuh"

namespace {

#ifdef PL_HAVE_WGMMA
template <> __device__ __forceinline__ void wgmma_bf16<24>(float (&c)[3][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}, %12, %13, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]),
                   "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3])
                 : "l"(da), "l"(db));
}
#endif

constexpr int MR = 64, XSLOT = MR * 128, NTH = 128 + 32;

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync_all() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/* an arrival on the barrier at the same offset in cluster CTA `rank`. CSCOPE: release at cluster
 * scope (a cluster-wide fence per arrival: ncu put 55% of the warps' cycles on it, "waiting on a
 * memory barrier", run 1 of the thirty-fourth session); else the default .release.cta, which is
 * enough here (and what CUTLASS's cluster barriers use): the consumer only read the slot through
 * wgmma, complete after wgmma_wait, and the refill is a TMA write (async proxy). */
template <bool CSCOPE> __device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, unsigned rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(bar), "r"(rank));
    if (CSCOPE)
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(r) : "memory");
    else
        asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(r) : "memory");
}
/* box (c0, c1) into the same offset of every CTA in mask, each counting it on its bar */
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const void *tmap, int c0, int c1, uint32_t bar, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

/* y [rows, n] bf16 = x [rows, k] w [n, k]^T; tw: boxes of NT weight rows x 64 k; tx: boxes of
 * 64 / CS x rows x 64 k. S weight slots, XS x slots; pre weight stages before the PDL wait. */
template <int NT, int CS, int S, int XS, int REL = 0, bool CSCOPE = true>
__global__ void __launch_bounds__(NTH, 1)
    fkmc_kernel(const __grid_constant__ CUtensorMap tw, const __grid_constant__ CUtensorMap tx, __nv_bfloat16 *__restrict__ y, int n, int k,
                int rows, int pre) {
#ifdef PL_HAVE_WGMMA
    constexpr int WSLOT = NT * 128, XR = MR / CS;
    pdl_trigger();
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, c = blockIdx.x, kt = k / 64;
    const unsigned rank = CS > 1 ? cluster_rank() : 0u;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, xb = sb + ((S * WSLOT + 1023) & ~1023);
    const uint32_t full = xb + XS * XSLOT, empty = full + S * 8, xfull = empty + S * 8, xempty = xfull + XS * 8;
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, 128);
        const int xc = REL == 1 ? CS : REL == 2 ? 4 : REL == 3 ? (rank == 0 ? 4 * CS : 4) : 4 * CS;
        for (int j = 0; j < XS; ++j) mbar_init(xfull + j * 8, 1), mbar_init(xempty + j * 8, xc);
        mbar_init_fence();
    }
    __syncthreads();
    if (CS > 1) cluster_sync_all(); /* every CTA's barriers exist before anyone names them */
    if (warp == 4) {
        if (lane == 0) {
            const uint64_t wpol = l2_evict_first();
            auto issue_w = [&](int q) {
                const uint32_t bar = full + (q % S) * 8;
                mbar_expect_tx(bar, WSLOT);
                tma_load_2d(sb + (q % S) * WSLOT, &tw, q * 64, c * NT, bar, wpol);
            };
            int nw = 0, nx = 0;
            for (; nw < pre && nw < kt; ++nw) issue_w(nw);
            pdl_wait();
            while (nx < kt || nw < kt) {
                if (nw < kt && (nw < S || mbar_test(empty + (nw % S) * 8, (unsigned)((nw / S - 1) & 1)))) issue_w(nw++);
                if (nx < kt && (nx < XS || mbar_test(xempty + (nx % XS) * 8, (unsigned)((nx / XS - 1) & 1)))) {
                    const uint32_t bar = xfull + (nx % XS) * 8, dst = xb + (nx % XS) * XSLOT;
                    mbar_expect_tx(bar, XSLOT); /* every CTA's slice lands here */
                    if (CS == 1) tma_load_2d(dst, &tx, nx * 64, 0, bar);
                    else if (REL == 2)
                        for (int r = 0; r < CS; ++r) tma_load_2d(dst + r * XR * 128, &tx, nx * 64, r * XR, bar);
                    else if (REL == 3) {
                        if (rank == 0)
                            for (int r = 0; r < CS; ++r) tma_load_2d_mc(dst + r * XR * 128, &tx, nx * 64, r * XR, bar, (uint16_t)((1u << CS) - 1));
                    } else
                        tma_load_2d_mc(dst + rank * XR * 128, &tx, nx * 64, (int)rank * XR, bar, (uint16_t)((1u << CS) - 1));
                    ++nx;
                }
            }
        }
    } else {
        pdl_wait();
        float acc[NT / 8][4];
#pragma unroll
        for (int j = 0; j < NT / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = 0; q < kt; ++q) {
            mbar_wait(full + (q % S) * 8, (unsigned)((q / S) & 1));
            mbar_wait(xfull + (q % XS) * 8, (unsigned)((q / XS) & 1));
            const uint64_t da = wgmma_desc_sw128(xb + (q % XS) * XSLOT), db = wgmma_desc_sw128(sb + (q % S) * WSLOT);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) wgmma_bf16<NT>(acc, da + 2 * kk, db + 2 * kk);
            wgmma_commit();
            wgmma_wait<0>();
            wgmma_fence_operands(acc);
            mbar_arrive(empty + (q % S) * 8);
            if (REL == 2 || REL == 3) {
                __syncwarp();
                if (lane == 0) {
                    if (REL == 3) mbar_arrive_remote<CSCOPE>(xempty + (q % XS) * 8, 0u);
                    if (REL == 2 || rank != 0) mbar_arrive(xempty + (q % XS) * 8);
                }
                continue;
            }
            if (REL == 1) { /* one release per CTA: the consumer warpgroup meets first */
                asm volatile("bar.sync 1, 128;\n" ::: "memory");
                if (tid == 0)
#pragma unroll
                    for (int r = 0; r < CS; ++r) mbar_arrive_remote<CSCOPE>(xempty + (q % XS) * 8, (unsigned)r);
                continue;
            }
            __syncwarp();
            if (lane == 0) {
                if (CS > 1)
#pragma unroll
                    for (int r = 0; r < CS; ++r) mbar_arrive_remote<CSCOPE>(xempty + (q % XS) * 8, (unsigned)r);
                else
                    mbar_arrive(xempty + (q % XS) * 8); /* one per warp: the count is 4 x CS */
            }
        }
        const int g8 = lane >> 2, t4 = lane & 3, tok0 = warp * 16 + g8, tok1 = tok0 + 8;
#pragma unroll
        for (int j = 0; j < NT / 8; ++j) {
            const int i = c * NT + 8 * j + 2 * t4;
            if (i < n) {
                if (tok0 < rows) *reinterpret_cast<__nv_bfloat162 *>(y + (size_t)tok0 * n + i) = __floats2bfloat162_rn(acc[j][0], acc[j][1]);
                if (tok1 < rows) *reinterpret_cast<__nv_bfloat162 *>(y + (size_t)tok1 * n + i) = __floats2bfloat162_rn(acc[j][2], acc[j][3]);
            }
        }
    }
    if (CS > 1) cluster_sync_all(); /* nobody leaves while a slice or an arrival may still come */
#endif
}

template <int NT, int S, int XS> size_t fk_smem() { return 1024 + ((S * NT * 128 + 1023) & ~1023) + XS * XSLOT + 2 * (S + XS) * 8; }

struct shape {
    const char *name;
    int n, k;
};

/* one variant's launch of layer l on s */
struct variant {
    const char *name;
    int ctas, cs, nt;
    size_t smem;
    void (*launch)(const variant &, const CUtensorMap &tw, const CUtensorMap &tx, __nv_bfloat16 *y, int n, int k, cudaStream_t s);
};

template <int NT, int CS, int S, int XS, int REL = 0, int PDL = 1, bool CSCOPE = true>
void launch_fk(const variant &v, const CUtensorMap &tw, const CUtensorMap &tx, __nv_bfloat16 *y, int n, int k, cudaStream_t s) {
    auto kern = fkmc_kernel<NT, CS, S, XS, REL, CSCOPE>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
    if (CS > 1) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[2];
    unsigned na = 0;
    cfg.gridDim = dim3((unsigned)v.ctas);
    cfg.blockDim = dim3(NTH);
    cfg.dynamicSmemBytes = v.smem;
    cfg.stream = s;
    if (PDL) {
        attr[na].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[na++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (CS > 1) {
        attr[na].id = cudaLaunchAttributeClusterDimension;
        attr[na].val.clusterDim.x = CS, attr[na].val.clusterDim.y = 1, attr[na++].val.clusterDim.z = 1;
    }
    cfg.attrs = attr;
    cfg.numAttrs = na;
    CK(cudaLaunchKernelEx(&cfg, kern, tw, tx, y, n, k, MR, S / 3 > 1 ? S / 3 : 1));
}

template <int NT, int CS, int S, int XS, int REL = 0, int PDL = 1, bool CSCOPE = true> variant make_variant(const char *name, int n) {
    const int c0 = (n + NT - 1) / NT, ctas = (c0 + CS - 1) / CS * CS;
    return variant{name, ctas, CS, NT, fk_smem<NT, S, XS>(), launch_fk<NT, CS, S, XS, REL, PDL, CSCOPE>};
}

/* the largest number of clusters of this variant resident at once */
template <int NT, int CS, int S, int XS> int max_clusters(const variant &v) {
    if (CS == 1) return -1;
    auto kern = fkmc_kernel<NT, CS, S, XS>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v.smem));
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)v.ctas);
    cfg.blockDim = dim3(NTH);
    cfg.dynamicSmemBytes = v.smem;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CS, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int nc = 0;
    CK(cudaOccupancyMaxActiveClusters(&nc, kern, &cfg));
    return nc;
}

float bf2f(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

} // namespace

int main(int argc, char **argv) {
    /* argv[1]: run only the variants whose name contains it (e.g. under ncu); EXP_REP: replays */
    const char *only = argc > 1 ? argv[1] : nullptr;
    const int REP = getenv("EXP_REP") ? atoi(getenv("EXP_REP")) : 20;
    cudaStream_t s;
    int sms;
    const double copy = exp_start(&s, &sms);
    if (!pl_cuda_mlp_available()) {
        printf("no sm_90a wgmma build on this device\n");
        return 0;
    }
    constexpr int L = 36;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const shape shapes[] = {{"qkv [6144 x 2560] (Qwen3-4B)", 6144, 2560}, {"o [2560 x 4096] (Qwen3-4B)", 2560, 4096}};
    printf("%-32s %-30s %6s %9s %8s %10s %9s %s\n", "shape", "variant", "CTAs", "smem KiB", "clusters", "us/layer", "x ideal", "y vs library full-K");
    for (const shape &sh : shapes) {
        const int n = sh.n, k = sh.k;
        const size_t wb = (size_t)n * k * 2;
        __nv_bfloat16 *w = nullptr, *x = nullptr, *y = nullptr;
        float *parts = nullptr;
        CK(cudaMalloc(&w, wb * L));
        CK(cudaMalloc(&x, (size_t)MR * k * 2));
        CK(cudaMalloc(&y, (size_t)MR * n * 2 * L));
        CK(cudaMalloc(&parts, (size_t)32 * MR * n * 4));
        fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(w), wb * L / 4, 17u);
        fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(x), (size_t)MR * k / 2, 99u);
        CK(cudaStreamSynchronize(s));
        const double ideal_us = wb / (copy * 1e3);
        /* the library's full-K kernel: the reference output and a baseline */
        pl_cuda_mlp_plan fp;
        const bool have_fk = pl_cuda_fullk_plan_for(n, k, sms, 0, &fp) != 0;
        std::vector<uint16_t> ref((size_t)MR * n), got((size_t)MR * n);
        auto run_graph = [&](auto enqueue_layer) {
            cudaGraph_t g;
            cudaGraphExec_t ge;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            for (int l = 0; l < L; l++) enqueue_layer(l);
            CK(cudaStreamEndCapture(s, &g));
            CK(cudaGraphInstantiate(&ge, g, 0));
            std::vector<float> t;
            for (int r = 0; r < REP + 2; r++) t.push_back(time_runs(s, e0, e1, 1, [&] { CK(cudaGraphLaunch(ge, s)); }));
            t.erase(t.begin(), t.begin() + 2);
            CK(cudaGraphExecDestroy(ge));
            CK(cudaGraphDestroy(g));
            return median(t) * 1e3 / L;
        };
        if (have_fk) {
            const float us = run_graph([&](int l) {
                CK((cudaError_t)pl_cuda_fullk_bf16(&fp, x, MR, MR, w + (size_t)l * n * k, y + (size_t)l * MR * n, 1, s));
            });
            CK(cudaMemcpy(ref.data(), y, ref.size() * 2, cudaMemcpyDeviceToHost));
            printf("%-32s %-30s %6d %9.1f %8s %10.2f %9.2f %s\n", sh.name, "library full-K (ring 0)", fp.ctas, fp.smem / 1024.0, "-", us,
                   us / ideal_us, "reference");
        }
        pl_cuda_mlp_plan wp;
        if (pl_cuda_wide_plan_for(n, k, sms, &wp)) {
            const float us = run_graph([&](int l) {
                CK((cudaError_t)pl_cuda_wide_bf16(&wp, x, MR, MR, w + (size_t)l * n * k, parts, 1, s));
                CK((cudaError_t)pl_cuda_mlp_sum_bf16(parts, wp.splits, MR, n, y + (size_t)l * MR * n, 1, s));
            });
            CK(cudaMemcpy(got.data(), y, got.size() * 2, cudaMemcpyDeviceToHost));
            double md = 0;
            for (size_t i = 0; i < got.size(); i++) md = fmax(md, fabs((double)bf2f(got[i]) - bf2f(ref[i])));
            char what[64];
            snprintf(what, sizeof what, "wide (%d splits) + sum", wp.splits);
            printf("%-32s %-30s %6d %9.1f %8s %10.2f %9.2f max|diff| %.3g\n", sh.name, what, wp.ctas, wp.smem / 1024.0, "-", us, us / ideal_us, md);
        }
        std::vector<std::pair<variant, int>> vs;
        if (n == 6144) {
            variant a = make_variant<48, 1, 11, 6>("mc NT48 CS1 11+6", n), b = make_variant<48, 2, 11, 6>("mc NT48 CS2 11+6", n),
                    c = make_variant<48, 2, 11, 6, 2>("cluster2, own x (no mc)", n), d = make_variant<48, 2, 11, 6, 3>("mc NT48 CS2, rank 0 issues", n),
                    e = make_variant<48, 4, 11, 6, 2>("cluster4, own x (no mc)", n), f = make_variant<48, 1, 11, 6, 0, 0>("mc NT48 CS1 11+6 noPDL", n),
                    g = make_variant<48, 2, 11, 6, 2, 0>("cluster2, own x, noPDL", n);
            variant h = make_variant<48, 2, 11, 6, 0, 1, false>("mc NT48 CS2 11+6 cta-rel", n),
                    i = make_variant<48, 2, 11, 6, 1, 1, false>("mc NT48 CS2 11+6 cta-rel rel1", n),
                    j = make_variant<48, 2, 11, 6, 3, 1, false>("mc NT48 CS2 cta-rel rank 0", n),
                    m = make_variant<48, 4, 11, 6, 0, 1, false>("mc NT48 CS4 11+6 cta-rel", n),
                    o = make_variant<48, 2, 9, 10, 0, 1, false>("mc NT48 CS2 9+10 cta-rel", n);
            /* run 3: deeper x rings (run 2: six 8 KiB x slots refilled per ~1.2 us round trip cap
             * a CTA near one stage per 200 ns, about what qkv needs) */
            variant p1 = make_variant<48, 2, 12, 12, 0, 1, false>("mc NT48 CS2 12+12 cta-rel", n),
                    p2 = make_variant<48, 2, 14, 12, 0, 1, false>("mc NT48 CS2 14+12 cta-rel", n),
                    p3 = make_variant<48, 2, 16, 10, 0, 1, false>("mc NT48 CS2 16+10 cta-rel", n),
                    p4 = make_variant<64, 2, 10, 10, 0, 1, false>("mc NT64 CS2 10+10 cta-rel", n),
                    p5 = make_variant<64, 2, 12, 10, 0, 1, false>("mc NT64 CS2 12+10 cta-rel", n),
                    p6 = make_variant<48, 1, 12, 12, 0, 1, false>("mc NT48 CS1 12+12", n),
                    p7 = make_variant<64, 1, 10, 10, 0, 1, false>("mc NT64 CS1 10+10", n);
            vs = {{a, -1}, {f, -1}, {b, max_clusters<48, 2, 11, 6>(b)}, {c, -2}, {g, -2}, {d, -2}, {e, -2}, {h, -2}, {i, -2}, {j, -2}, {m, -2},
                  {o, -2}, {p1, -2}, {p2, -2}, {p3, -2}, {p4, -2}, {p5, -2}, {p6, -2}, {p7, -2}};
        } else {
            variant a = make_variant<24, 1, 16, 6>("mc NT24 CS1 16+6", n), b = make_variant<24, 2, 16, 6>("mc NT24 CS2 16+6", n),
                    c = make_variant<24, 2, 16, 6, 2>("cluster2, own x (no mc)", n), d = make_variant<24, 2, 16, 6, 3>("mc NT24 CS2, rank 0 issues", n);
            variant e = make_variant<24, 2, 16, 6, 0, 1, false>("mc NT24 CS2 16+6 cta-rel", n),
                    f = make_variant<24, 2, 16, 6, 1, 1, false>("mc NT24 CS2 16+6 cta-rel rel1", n),
                    g = make_variant<24, 4, 16, 6, 0, 1, false>("mc NT24 CS4 16+6 cta-rel", n);
            variant q1 = make_variant<24, 2, 16, 16, 0, 1, false>("mc NT24 CS2 16+16 cta-rel", n),
                    q2 = make_variant<24, 2, 24, 14, 0, 1, false>("mc NT24 CS2 24+14 cta-rel", n),
                    q3 = make_variant<32, 2, 16, 14, 0, 1, false>("mc NT32 CS2 16+14 cta-rel", n),
                    q4 = make_variant<24, 1, 16, 16, 0, 1, false>("mc NT24 CS1 16+16", n),
                    q5 = make_variant<24, 4, 16, 16, 0, 1, false>("mc NT24 CS4 16+16 cta-rel", n);
            vs = {{a, -1}, {b, max_clusters<24, 2, 16, 6>(b)}, {c, -2}, {d, -2}, {e, -2}, {f, -2}, {g, -2},
                  {q1, -2}, {q2, -2}, {q3, -2}, {q4, -2}, {q5, -2}};
        }
        for (auto &pv : vs) {
            const variant &v = pv.first;
            if (only && !strstr(v.name, only)) continue;
            std::vector<CUtensorMap> tws(L);
            CUtensorMap tx;
            bool ok = pl_cuda_tmap_2d_bf16(&tx, x, (uint64_t)k, MR, (uint64_t)k * 2, 64, (uint32_t)(MR / v.cs)) != 0;
            const int nt = v.nt;
            for (int l = 0; l < L && ok; l++)
                ok = pl_cuda_tmap_2d_bf16(&tws[l], w + (size_t)l * n * k, (uint64_t)k, (uint64_t)n, (uint64_t)k * 2, 64, (uint32_t)nt) != 0;
            if (!ok) {
                printf("%-32s %-30s tensor maps refused\n", sh.name, v.name);
                continue;
            }
            CK(cudaMemset(y, 0xff, (size_t)MR * n * 2 * L));
            const float us = run_graph([&](int l) { v.launch(v, tws[l], tx, y + (size_t)l * MR * n, n, k, s); });
            CK(cudaMemcpy(got.data(), y, got.size() * 2, cudaMemcpyDeviceToHost));
            size_t same = 0;
            double md = 0;
            for (size_t i = 0; i < got.size(); i++) {
                same += got[i] == ref[i];
                md = fmax(md, fabs((double)bf2f(got[i]) - bf2f(ref[i])));
            }
            char cl[16], chk[64];
            snprintf(cl, sizeof cl, "%d", pv.second);
            snprintf(chk, sizeof chk, "%zu/%zu same bits, max|diff| %.3g", same, got.size(), md);
            printf("%-32s %-30s %6d %9.1f %8s %10.2f %9.2f %s\n", sh.name, v.name, v.ctas, v.smem / 1024.0, pv.second < 0 ? "-" : cl, us,
                   us / ideal_us, chk);
        }
        printf("%-32s ideal (weights at the copy rate): %.2f us a layer\n", sh.name, ideal_us);
        CK(cudaFree(w));
        CK(cudaFree(x));
        CK(cudaFree(y));
        CK(cudaFree(parts));
    }
    return 0;
}
