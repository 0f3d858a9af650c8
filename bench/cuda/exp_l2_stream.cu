/* Experiment: a weight streamer beside the projection chain. Every earlier L2 lead asked for
 * a projection's weights from inside the launch chain (prefetch instructions: no hits; real
 * reads by the kernel before: they held it up). Here a persistent kernel on a parallel
 * branch of the graph, one warp per SM and no shared memory (so it sits beside the GEMMs'
 * two 97 KiB CTAs), reads ahead of the chain for real: for the GEMM after the running one,
 * the k tiles [S0, S0 + J) of every one of its CTAs (the stages its CTAs fetch after their
 * PDL wait, where each boundary's DRAM bubble is), one 4-byte load per 128-byte line with the
 * L2::128B fetch hint (or per 32-byte sector), so L2 gets the lines and the SMs 1/32 of the
 * bytes. It paces itself on the chain: GEMM t's lines are read once GEMM t - 2 has stored its
 * first output (y[0] leaves a NaN sentinel that a kernel at the graph's start writes), that is
 * while GEMM t - 1 runs and its tail drains.
 * Chain: 36 layers x (qkv, o, gate_up, down) of Qwen3-4B through the backend's tile GEMM
 * (pl_cuda_gemv_bf16, PDL), distinct weights per layer (cold), M rows (argv[1], default 64;
 * the tile kernel's K splits, so M > 8), median graph replay.
 *
 * Results (PERF.md, twenty-seventh session; bench/cuda/results-h200-model/session27/run2, run3):
 * at 64 rows the chain took 2.559-2.565 ms alone (1.49x the copy-rate ideal) and 2.526-2.530 with
 * the streamer on k tiles 3-8 (1.2% less) on one card, 2.646-2.649 alone and 2.699-2.701 with it
 * (2% more) on another; longer or earlier reads, per-sector loads (45% slower: one load per 32
 * bytes) and an unpaced streamer were slower everywhere, and at 32 rows every form was. In one
 * replay of the ten of each variant every pacing wait gave up: the graph ran that replay's two
 * branches one after the other (run 1's unbounded waits hung there), so a kernel that waits on
 * another branch of a graph needs bounded waits. No lead for the step.
 * Not part of the build. On a GPU machine (after building libpagellm.a in build-gpu):
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda bench/cuda/exp_l2_stream.cu \
 *        build-gpu/libpagellm.a -lcuda -o exp_l2_stream
 *   ./exp_l2_stream [M] [rounds] [tile CTAs per SM]
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/gemv_cuda.h"
#include "cuda/ptx.cuh"
#include "exp_util.cuh"
#include "exp_chain.cuh"

namespace {

constexpr int LAYERS = 36, KINDS = 4, TBM = 128, TBK = 64;

/* what the streamer needs of GEMM t: its weights and the tile kernel's grid (tiles x ks,
 * split r of a tile owns k tiles [KT r / ks, KT (r + 1) / ks)) */
struct target {
    const __nv_bfloat16 *w;
    int n, k, tiles, ks;
    const unsigned short *flag; /* y[0] of this GEMM: 0xffff until it stores */
};

__global__ void set_sentinels(const target *t, int nt) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nt; i += gridDim.x * blockDim.x)
        *const_cast<unsigned short *>(t[i].flag) = 0xffffu;
}

__device__ __forceinline__ uint32_t ld_line(const void *p, int mode, uint64_t pol) {
    uint32_t v;
    if (mode == 0) asm volatile("ld.global.L2::128B.b32 %0, [%1];\n" : "=r"(v) : "l"(p));
    else if (mode == 1) asm volatile("ld.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p));
    else asm volatile("ld.global.L2::cache_hint.L2::128B.b32 %0, [%1], %2;\n" : "=r"(v) : "l"(p), "l"(pol));
    return v;
}

/* mode 0: a load per 128-byte line with the L2::128B hint; 1: a load per 32-byte sector;
 * 2: as 0 with an L2 evict_last policy. wait 0: no pacing (reads everything at once). */
__global__ void __launch_bounds__(32) streamer(const target *tg, int nt, int s0, int J, int mode, int wait, unsigned *sink) {
    const int lane = threadIdx.x;
    uint64_t pol = 0;
    if (mode == 2) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(pol));
    uint32_t acc = 0;
    const int step = mode == 1 ? 32 : 128, per_tile = TBK * 2 / step; /* loads per row per k tile */
    for (int t = 0; t < nt; ++t) {
        const target T = tg[t];
        if (wait && t >= 2) {
            if (lane == 0) { /* bounded: a graph need not run its branches at once */
                const volatile unsigned short *f = tg[t - 2].flag;
                const unsigned long long t0 = gtimer();
                while (*f == 0xffffu)
                    if (gtimer() - t0 > 200000ull) {
                        atomicAdd(sink + 4095, 1u);
                        break;
                    } else __nanosleep(200);
            }
            __syncwarp();
        }
        const int KT = (T.k + TBK - 1) / TBK, ncta = T.tiles * T.ks;
        for (int c = blockIdx.x; c < ncta; c += gridDim.x) {
            const int tile = c % T.tiles, split = c / T.tiles;
            const int kt0 = (int)((long long)KT * split / T.ks), nkt = (int)((long long)KT * (split + 1) / T.ks) - kt0;
            const int a = s0 < nkt ? s0 : nkt, b = s0 + J < nkt ? s0 + J : nkt;
            const int per_row = (b - a) * per_tile, total = TBM * per_row;
            const char *base = reinterpret_cast<const char *>(T.w);
            for (int i0 = 0; i0 < total; i0 += 32 * 16) {
                uint32_t v[16];
#pragma unroll
                for (int u = 0; u < 16; ++u) {
                    const int i = i0 + u * 32 + lane;
                    v[u] = 0;
                    if (i < total) {
                        const int r = i / per_row, q = i % per_row, row = tile * TBM + r;
                        if (row < T.n)
                            v[u] = ld_line(base + ((size_t)row * T.k + (size_t)(kt0 + a) * TBK) * 2 + (size_t)q * step, mode, pol);
                    }
                }
#pragma unroll
                for (int u = 0; u < 16; ++u) acc ^= v[u];
            }
        }
    }
    if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc; /* keeps the loads */
}

} // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IONBF, 0);
    const int M = argc > 1 ? atoi(argv[1]) : 64, per_sm = argc > 3 ? atoi(argv[3]) : 0;
    if (M <= 8 || M > 64) {
        fprintf(stderr, "M: %d, want 9..64 (the tile kernel's K splits)\n", M);
        return 2;
    }
    cudaStream_t s, s2;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    const int shp[KINDS][2] = {{6144, 2560}, {2560, 4096}, {19456, 2560}, {2560, 9728}};
    static const char *const names[KINDS] = {"qkv", "o", "gate_up", "down"};
    std::vector<__nv_bfloat16 *> W((size_t)LAYERS * KINDS), Y((size_t)LAYERS * KINDS);
    __nv_bfloat16 *X[KINDS];
    pl_cuda_gemv_ws ws[KINDS];
    double bytes = 0;
    std::vector<target> tg;
    for (int kd = 0; kd < KINDS; ++kd) {
        const int N = shp[kd][0], K = shp[kd][1];
        CK(cudaMalloc(&X[kd], (size_t)64 * K * 2));
        fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(X[kd]), (size_t)64 * K / 2, 5u + kd);
        memset(&ws[kd], 0, sizeof ws[kd]);
        ws[kd].sms = sms;
        ws[kd].pdl = 1;
        ws[kd].tile_ctas_per_sm = per_sm; /* 0: the default (2 up to 16 rows, 1 past) */
        ws[kd].bytes = pl_cuda_gemv_ws_bytes(PL_CUDA_GEMV_TILE, N, K, &ws[kd]);
        if (ws[kd].bytes) {
            CK(cudaMalloc(&ws[kd].ptr, ws[kd].bytes));
            CK(cudaMemset(ws[kd].ptr, 0, ws[kd].bytes));
        }
        printf("%s [%d x %d]: %d tiles x %d splits, %.1f MB\n", names[kd], N, K, (N + TBM - 1) / TBM,
               pl_cuda_gemv_tile_splits(N, K, M, &ws[kd]), (double)N * K * 2 / 1e6);
    }
    for (int l = 0; l < LAYERS; ++l)
        for (int kd = 0; kd < KINDS; ++kd) {
            const int N = shp[kd][0], K = shp[kd][1], g = l * KINDS + kd;
            CK(cudaMalloc(&W[g], (size_t)N * K * 2));
            fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(W[g]), (size_t)N * K / 2, 77u + g);
            CK(cudaMalloc(&Y[g], (size_t)M * N * 2));
            bytes += (double)N * K * 2;
            tg.push_back({W[g], N, K, (N + TBM - 1) / TBM, pl_cuda_gemv_tile_splits(N, K, M, &ws[kd]),
                          reinterpret_cast<const unsigned short *>(Y[g])});
        }
    target *dtg = nullptr;
    unsigned *sink = nullptr;
    CK(cudaMalloc(&dtg, tg.size() * sizeof(target)));
    CK(cudaMemcpy(dtg, tg.data(), tg.size() * sizeof(target), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
    CK(cudaMemset(sink, 0, 4096 * sizeof(unsigned)));
    CK(cudaStreamSynchronize(s));
    const int nt = (int)tg.size();
    cudaEvent_t e0, e1, fork, join;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    struct variant {
        const char *name;
        int stream, s0, J, mode, wait;
    } vs[] = {{"chain alone", 0, 0, 0, 0, 0},
              {"streamer: k tiles 3-8, lines, L2::128B", 1, 3, 6, 0, 1},
              {"streamer: k tiles 3-14, lines", 1, 3, 12, 0, 1},
              {"streamer: k tiles 0-7, lines", 1, 0, 8, 0, 1},
              {"streamer: k tiles 3-8, sectors", 1, 3, 6, 1, 1},
              {"streamer: k tiles 3-8, lines, evict_last", 1, 3, 6, 2, 1},
              {"streamer: k tiles 3-8, lines, not paced", 1, 3, 6, 0, 0},
              {"chain alone (again)", 0, 0, 0, 0, 0}};
    printf("M = %d; %d GEMMs, %.2f GB of weights, ideal %.3f ms at the copy rate\n", M, nt, bytes / 1e9, bytes / (copy * 1e6));
    const int rounds = argc > 2 ? atoi(argv[2]) : 3;
    for (int r = 0; r < rounds; ++r)
        for (const variant &v : vs) {
            const float ms = graph_ms(s, e0, e1, [&] {
                set_sentinels<<<1, 256, 0, s>>>(dtg, nt);
                if (v.stream) {
                    CK(cudaEventRecord(fork, s));
                    CK(cudaStreamWaitEvent(s2, fork, 0));
                    streamer<<<sms, 32, 0, s2>>>(dtg, nt, v.s0, v.J, v.mode, v.wait, sink);
                    CK(cudaGetLastError());
                }
                for (int l = 0; l < LAYERS; ++l)
                    for (int kd = 0; kd < KINDS; ++kd) {
                        const int g = l * KINDS + kd;
                        CK((cudaError_t)pl_cuda_gemv_bf16(W[g], X[kd], M, shp[kd][0], shp[kd][1], Y[g], 0, PL_CUDA_GEMV_TILE, &ws[kd], s));
                    }
                if (v.stream) {
                    CK(cudaEventRecord(join, s2));
                    CK(cudaStreamWaitEvent(s, join, 0));
                }
            });
            unsigned to = 0;
            CK(cudaMemcpy(&to, sink + 4095, sizeof to, cudaMemcpyDeviceToHost));
            CK(cudaMemset(sink + 4095, 0, sizeof to));
            printf("round %d  %-44s %8.3f ms  %.3fx ideal  %7.1f us/layer  (pacing waits given up: %u)\n", r, v.name, ms,
                   ms / (bytes / (copy * 1e6)), ms * 1e3 / LAYERS, to);
        }
    return 0;
}
