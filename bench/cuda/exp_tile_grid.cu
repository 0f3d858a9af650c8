/* Experiment: past 16 rows, is a one-wave tile GEMM grid bound by its CTAs per SM? The LM head
 * at 64 rows (1187 CTAs, two per SM over many waves) streams at ~4.0 TB/s, the layer
 * projections at 64 rows (one CTA per SM: gate_up 152 CTAs without a K split, qkv 96, o and
 * down 120 with 2-6 splits in a cluster) at 1.6-3.3 TB/s. A stream-K grid of exactly two CTAs
 * per SM would need partial tiles and their sums; before building that, this measures the
 * same bytes in shapes whose default grid has no split at all:
 *   real shape              the backend's tile GEMM on the projection (default grid);
 *   2/SM one wave           the same bytes as [264 x 128 rows, K'] with K' = bytes / (264 x 256):
 *                           264 CTAs of one tile each, two per SM, one wave (an upper bound for
 *                           stream-K: no partials, no sums);
 *   1/SM one wave           [132 x 128 rows, 2 K']: one CTA per SM, no split;
 *   2/SM two waves          [528 x 128 rows, K' / 2]: two waves of two per SM.
 * Chains of 36 layers of distinct weights (cold), PDL launches, in a CUDA graph; us per
 * layer and GB/s of weights. M = 64 and M = 32.
 * Twenty-first session (session21/runs/r12-r18): at 64 rows the real shapes stream at 0.47-0.66x
 * of the copy rate, the same bytes as one wave of one CTA per SM at 0.71-0.95x (gate_up 26-27
 * against 36 us, qkv 10.1-10.5 against 13.3-13.6, o 7.2-7.3 against 10.3-10.7, down 13.9-14.9
 * against 20.9-21.2); two per SM in one wave is no faster than one. A stream-K grid (one CTA
 * per SM over equal (tile, k) shares, partials added by each tile's last CTA;
 * session21/patches/run15_*.patch) was slower in all three forms tried: the tile sums sit on
 * the critical path (o 20-38 us). One wave of CTAs owning equal rows over all of K for gate_up
 * (session21/patches/run17_*.patch) took 29.5 against 36.4 us here but was level in the step.
 *
 * Not part of the build. On a GPU machine (after building libpagellm.a in build-gpu):
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude -Isrc -Ibench/cuda bench/cuda/exp_tile_grid.cu \
 *        build-gpu/libpagellm.a -lcuda -o exp_tile_grid
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "cuda/gemv_cuda.h"
#include "cuda/ptx.cuh"
#include "exp_util.cuh"
#include "exp_chain.cuh"

namespace {

constexpr int LAYERS = 36;

} // namespace

int main() {
    cudaStream_t s;
    int sms = 0;
    const double copy = exp_start(&s, &sms);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    struct shape {
        const char *name;
        int N, K;
    } shapes[] = {{"gate_up", 19456, 2560}, {"qkv", 6144, 2560}, {"o", 2560, 4096}, {"down", 2560, 9728}};
    for (int M : {64, 32})
        for (const shape &sh : shapes) {
            const size_t bytes = (size_t)sh.N * sh.K * 2;
            /* K' for 264 tiles: a multiple of 64 */
            const int k264 = (int)((bytes / ((size_t)2 * sms * 128 * 2) + 63) / 64 * 64);
            struct var {
                const char *name;
                int N, K;
            } vs[] = {{"real shape", sh.N, sh.K},
                      {"2/SM one wave", 2 * sms * 128, k264},
                      {"1/SM one wave", sms * 128, 2 * k264},
                      {"2/SM two waves", 4 * sms * 128, k264 / 2 / 64 * 64 > 0 ? k264 / 2 / 64 * 64 : 64}};
            printf("M %d, %s [%d x %d], %.1f MB:", M, sh.name, sh.N, sh.K, bytes / 1e6);
            for (const var &v : vs) {
                const size_t wel = (size_t)v.N * v.K;
                gemm_layers g(s, LAYERS, M, v.N, v.K, sms);
                const float ms = graph_ms(s, e0, e1, [&] {
                    for (int l = 0; l < LAYERS; l++)
                        CK((cudaError_t)pl_cuda_gemv_bf16(g.W[l], g.x, M, v.N, v.K, g.y, 0, PL_CUDA_GEMV_TILE, &g.ws, s));
                });
                const double us = ms * 1e3 / LAYERS, b = (double)wel * 2;
                printf(" %s [%d x %d, %d splits] %.2f us (%.0f GB/s, %.2fx copy);", v.name, v.N, v.K,
                       pl_cuda_gemv_tile_splits(v.N, v.K, M, &g.ws), us, b / (us * 1e3), (b / (us * 1e-6) / 1e9) / copy);
            }
            printf("\n");
        }
    return 0;
}
