/* Experiment: how fast can a decode-sized GEMM stream its weights, by work order and weight
 * layout? The fifth CUDA session found a stream-K split of the tile GEMM slower than the fixed
 * per-tile K split in every projection (PERF.md), though it fills the SMs evenly. This program
 * isolates the weight stream: the tile GEMM's main loop (128 weight rows x 64 k per stage,
 * 4-stage cp.async ring, ldmatrix + mma.sync against 4 token rows, two CTAs per SM) under
 *   - work split: "tiles x ks" (a CTA per (128-row tile, 1/ks of K), as the backend does) or
 *     "stream-K" (equal linear ranges of (tile, k step), one wave of 2 CTAs per SM);
 *   - layout: row-major W[N, K] (each stage reads 128 runs of 128 bytes) or "slab" (each
 *     (tile, k step) block of 16 KiB contiguous, as a repacked decode copy would be).
 * Partial sums are written, not added (this measures the stream, not the fixup). Ceilings in
 * the same run: cudaMemcpy device to device and a plain 16-byte-load read kernel.
 *
 * (Run 6 of the fifth session filled the weights with an earlier hash of the same kind.)
 * Not part of the build. On a GPU machine:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc bench/cuda/exp_weight_stream.cu -o exp_weight_stream
 *   ./exp_weight_stream            (prints one line per case: us, GB/s of weight bytes)
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "cuda/ptx.cuh"
#include "exp_util.cuh"


namespace {

constexpr int TW = 8, TBM = 128, TBK = 64, TST = 4, M = 4;
constexpr int T_WBYTES = TBM * TBK * 2, T_XBYTES = 16 * TBK * 2, T_STAGE = T_WBYTES + T_XBYTES, T_SMEM = TST * T_STAGE;

/* CTA work: steps [u0, u0 + n) of the linear (tile, k step) order; tile-split grids give each
 * CTA one tile's k range, stream-K grids equal ranges. */
__global__ void __launch_bounds__(TW * 32, 2) stream_kernel(const __nv_bfloat16 *__restrict__ W, const __nv_bfloat16 *__restrict__ x,
                                                            int N, int K, int ks, int slab, float *__restrict__ out) {
    extern __shared__ __align__(128) unsigned char tsm[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int KT = K / TBK, tiles = N / TBM;
    int u0, n;
    if (ks > 0) { /* tiles x ks: blockIdx.x = tile * ks + split */
        const int t = blockIdx.x / ks, sp = blockIdx.x % ks;
        const int k0 = KT * sp / ks, k1 = KT * (sp + 1) / ks;
        u0 = t * KT + k0, n = k1 - k0;
    } else {
        const long long total = (long long)tiles * KT;
        u0 = (int)(total * blockIdx.x / gridDim.x);
        n = (int)(total * (blockIdx.x + 1) / gridDim.x) - u0;
    }
    const uint32_t sb = smem_u32(tsm);
    int lt = u0 / KT, lk = u0 % KT;
    auto load = [&](int st) {
#pragma unroll
        for (int i = 0; i < T_WBYTES / 16 / (TW * 32); ++i) {
            const int q = tid + i * TW * 32, r = q >> 3, ch = q & 7;
            const __nv_bfloat16 *src = slab ? W + (((size_t)lt * KT + lk) * TBM + r) * TBK + ch * 8
                                            : W + (size_t)(lt * TBM + r) * K + lk * TBK + ch * 8;
            cp_async16(sb + st * T_STAGE + swz128(r, ch), src, 16);
        }
        if (tid < 16 * 8) {
            const int r = tid >> 3, ch = tid & 7;
            cp_async16(sb + st * T_STAGE + T_WBYTES + swz128(r, ch), x + (size_t)(r < M ? r : 0) * K + lk * TBK + ch * 8,
                       r < M ? 16 : 0);
        }
        if (++lk == KT) lk = 0, ++lt;
    };
#pragma unroll
    for (int j = 0; j < TST - 1; ++j) {
        if (j < n) load(j);
        cp_async_commit();
    }
    float acc[2][4] = {};
    int ck = u0 % KT;
    for (int i = 0; i < n; ++i) {
        cp_async_wait<TST - 2>();
        __syncthreads();
        if (i + TST - 1 < n) load((i + TST - 1) % TST);
        cp_async_commit();
        const uint32_t wsm = sb + (i % TST) * T_STAGE, xsm = wsm + T_WBYTES;
        stage_mma(wsm, xsm, warp, lane, acc);
        if (++ck == KT || i + 1 == n) { /* end of a piece: write it (no fixup) */
            ck = 0;
            float *o = out + ((size_t)blockIdx.x * 2 + (i + 1 == n)) * TW * 32 * 4;
            *reinterpret_cast<float4 *>(o + tid * 4) = make_float4(acc[0][0] + acc[1][0], acc[0][1] + acc[1][1], acc[0][2], acc[1][3]);
            acc[0][0] = acc[0][1] = acc[0][2] = acc[0][3] = acc[1][0] = acc[1][1] = acc[1][2] = acc[1][3] = 0.f;
        }
    }
    cp_async_wait<0>();
}

__global__ void read_kernel(const uint4 *__restrict__ p, size_t n, uint4 *__restrict__ sink) {
    uint4 a = make_uint4(0, 0, 0, 0);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        a.x ^= v.x, a.y ^= v.y, a.z ^= v.z, a.w ^= v.w;
    }
    if (a.x == 0x12345678u) sink[0] = a; /* practically never: keeps the loads */
}


/* tiles N x K rows-major -> slab: [tile][k step][128 rows][64 k] */
__global__ void to_slab(const __nv_bfloat16 *src, __nv_bfloat16 *dst, int N, int K) {
    const int KT = K / TBK;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)N * K; i += (size_t)gridDim.x * blockDim.x) {
        const int row = (int)(i / K), k = (int)(i % K);
        const int t = row / TBM, r = row % TBM, kt = k / TBK, kk = k % TBK;
        dst[(((size_t)t * KT + kt) * TBM + r) * TBK + kk] = src[i];
    }
}


} // namespace

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM));
    const size_t rot_bytes = (size_t)512 << 20; /* rotation past the 60 MB L2 */
    const size_t pool_bytes = (size_t)2 << 30; /* row-major copies, then their slab copies */
    char *pool = nullptr;
    CK(cudaMalloc(&pool, pool_bytes));
    fill<<<sms * 8, 256>>>(reinterpret_cast<uint32_t *>(pool), pool_bytes / 4, 1);
    __nv_bfloat16 *x = nullptr;
    float *out = nullptr;
    uint4 *sink = nullptr;
    CK(cudaMalloc(&x, (size_t)M * 16384 * 2));
    CK(cudaMemset(x, 0, (size_t)M * 16384 * 2));
    CK(cudaMalloc(&out, (size_t)4096 * 2 * TW * 32 * 4 * 4));
    CK(cudaMalloc(&sink, 16));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int reps = 40;

    /* ceilings */
    {
        std::vector<float> t;
        const size_t b = (size_t)256 << 20;
        for (int r = 0; r < 10; r++)
            t.push_back(time_runs(0, e0, e1, 1, [&] { CK(cudaMemcpyAsync(pool + b, pool, b, cudaMemcpyDeviceToDevice)); }));
        printf("copy D2D 256 MiB: %.1f GB/s (read + write)\n", 2.0 * b / (median(t) * 1e-3) / 1e9);
        t.clear();
        for (int r = 0; r < 10; r++)
            t.push_back(time_runs(0, e0, e1, 1, [&] { read_kernel<<<sms * 8, 512>>>(reinterpret_cast<const uint4 *>(pool), rot_bytes / 16, sink); }));
        printf("read kernel 512 MiB: %.1f GB/s\n", rot_bytes / (median(t) * 1e-3) / 1e9);
    }

    struct shape {
        const char *name;
        int N, K;
    } shapes[] = {{"qkv", 6144, 2560}, {"o", 2560, 4096}, {"gate_up", 19456, 2560}, {"down", 2560, 9728}, {"lm_head", 151936, 2560}};
    printf("%-8s %-6s %-14s %6s %9s %8s\n", "shape", "layout", "split", "CTAs", "us", "GB/s");
    for (const shape &sh : shapes) {
        const size_t wb = (size_t)sh.N * sh.K * 2;
        const int copies = wb >= rot_bytes ? 1 : (int)(rot_bytes / wb);
        /* slab copies live right after the row-major ones */
        char *slab_base = pool + (size_t)copies * wb;
        const bool slab_fits = (size_t)2 * copies * wb <= pool_bytes;
        if (slab_fits)
            for (int c = 0; c < copies; c++)
                to_slab<<<sms * 8, 256>>>(reinterpret_cast<const __nv_bfloat16 *>(pool + c * wb),
                                          reinterpret_cast<__nv_bfloat16 *>(slab_base + c * wb), sh.N, sh.K);
        CK(cudaDeviceSynchronize());
        const int tiles = sh.N / TBM, KT = sh.K / TBK;
        /* the backend's split: about 2 CTAs per SM, >= 4 k steps, <= 16 splits */
        int ks_def = 2 * sms / tiles;
        if (ks_def > KT / 4) ks_def = KT / 4;
        if (ks_def > 16) ks_def = 16;
        if (ks_def < 1) ks_def = 1;
        struct cfg {
            const char *what;
            int ks, ctas;
        } cfgs[] = {{"tiles x ks", ks_def, tiles * ks_def}, {"tiles x 2ks", 2 * ks_def, tiles * 2 * ks_def},
                    {"stream-K 2/SM", 0, 2 * sms}, {"stream-K 4/SM", 0, 4 * sms}};
        for (int layout = 0; layout < 2; layout++) {
            if (layout == 1 && !slab_fits) continue;
            for (const cfg &c : cfgs) {
                if (c.ks > KT) continue;
                std::vector<float> t;
                for (int r = 0; r < reps; r++) {
                    const char *w = (layout ? slab_base : pool) + (size_t)(r % copies) * wb;
                    const float ms = time_runs(0, e0, e1, 1, [&] {
                        stream_kernel<<<c.ctas, TW * 32, T_SMEM>>>(reinterpret_cast<const __nv_bfloat16 *>(w), x, sh.N, sh.K, c.ks,
                                                                   layout, out);
                    });
                    if (r >= 2) t.push_back(ms);
                }
                const float ms = median(t);
                char split[32];
                snprintf(split, sizeof split, c.ks ? "%s=%d" : "%s", c.what, c.ks);
                printf("%-8s %-6s %-14s %6d %9.1f %8.1f\n", sh.name, layout ? "slab" : "row", split, c.ctas, ms * 1e3,
                       wb / (ms * 1e-3) / 1e9);
            }
        }
    }
    return 0;
}
