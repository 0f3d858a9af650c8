/* Shared pieces of the stand-alone kernel experiments (bench/cuda/exp_*.cu): error check,
 * the tile GEMM's 128-byte-row swizzle and one stage of its MMA, a timer, a median, the copy
 * ceiling, a weight fill.
 * Include after cuda/ptx.cuh. */
#ifndef PL_BENCH_EXP_UTIL_CUH
#define PL_BENCH_EXP_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_cuda.h" /* CK */

#include <algorithm>
#include <vector>


namespace {

/* byte offset of 16-byte chunk ch of row r in a [rows][64] bf16 tile (128-byte rows) */
__device__ __forceinline__ uint32_t swz128(int r, int ch) { return (uint32_t)(r * 128 + ((ch ^ (r & 7)) << 4)); }

/* one 64-k stage of the tile GEMM (M <= 16): warp w's 16 weight rows (A) against the 16
 * token rows (B) of the stage, both swizzled [rows][64] bf16 tiles in shared memory */
__device__ __forceinline__ void stage_mma(uint32_t wsm, uint32_t xsm, int warp, int lane, float (&acc)[2][4]) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        uint32_t a[4], b0, b1, b2, b3;
        ldmatrix_x4(wsm + swz128(warp * 16 + (lane & 15), kk * 2 + (lane >> 4)), a[0], a[1], a[2], a[3]);
        ldmatrix_x4(xsm + swz128((lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)), b0, b1, b2, b3);
        mma_bf16(acc[0], a, b0, b1);
        mma_bf16(acc[1], a, b2, b3);
    }
}

/* the global nanosecond timer (32 ns steps on the H200), for per-CTA stamps */
__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ms per run of `enqueue` (which puts one run on s), timed over rep back-to-back runs */
template <typename F> float time_runs(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int rep, F enqueue) {
    float ms;
    CK(cudaEventRecord(e0, s));
    for (int q = 0; q < rep; q++) enqueue();
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / rep;
}

float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* The copy ceiling, same run: device-to-device copy rate in GB/s (read + write), median of 8
 * copies of 1 GiB on s. */
double copy_ceiling_gbps(cudaStream_t s) {
    std::vector<float> t;
    const size_t cb = (size_t)1 << 30;
    char *buf = nullptr;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc(&buf, 2 * cb));
    for (int r = 0; r < 8; r++) t.push_back(time_runs(s, e0, e1, 1, [&] { CK(cudaMemcpyAsync(buf + cb, buf, cb, cudaMemcpyDeviceToDevice, s)); }));
    CK(cudaFree(buf));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return 2.0 * cb / (median(t) * 1e-3) / 1e9;
}

/* The usual start of an experiment: a non-blocking stream, the SM count, the copy ceiling
 * (printed); returns the ceiling in GB/s. */
double exp_start(cudaStream_t *s, int *sms) {
    CK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    CK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, 0));
    const double copy = copy_ceiling_gbps(*s);
    printf("device: %d SMs; copy %.0f GB/s (read + write)\n", *sms, copy);
    return copy;
}

/* bf16 pairs with hashed sign and mantissa bits, |v| in [2^-7, 2^-6): varied, finite */
__global__ void fill(uint32_t *p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
        p[i] = (h & 0x807f807fu) | 0x3c003c00u;
    }
}

} // namespace

#endif
