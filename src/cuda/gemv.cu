/* Skinny GEMMs for decode: y[M, N] = x[M, K] W[N, K]^T for a few token rows, bf16 x and W,
 * f32 accumulation, bf16 or f32 y. At such M the product is a stream over W (8 GB per step
 * for Qwen3-4B), and cuBLAS reads it at about half the copy bandwidth. Three kernels:
 *  - CUDA cores, M <= 8 (the default at 1 row), first below;
 *  - tensor cores without staging, 2 <= M <= 8 (`gemv_mma_kernel`, kept as a reference);
 *  - the staged tensor-core tile kernel (wgmma on sm_90a), M <= 64 (`gemm_tile_kernel`, the
 *    default from 2 to 64 rows).
 *
 * CUDA-core kernel: one block owns R output rows for all M tokens; its 4 warps split K
 * (16-byte chunks, U loads of each row in flight per thread) and meet in shared memory. Small
 * work items (R rows) keep every SM busy to the end even when N is only a few thousand rows
 * (a warp per row-pair left a partial last wave that cost as much as the rest). x is read
 * through L1 (every block reads all of it; it stays cached). */
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "cuda/gemv_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/diag_stamps.cuh"
#include "cuda/tma_cuda.h"

namespace {

constexpr int WARPS = 4; /* 128 threads split K */
constexpr int U = 4;     /* 16-byte chunks of each row loaded ahead per thread */

__device__ __forceinline__ void bf16x8_to_f32(const uint4 &v, float *f) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = __uint_as_float(w[i] << 16);
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

/* Programmatic dependent launch: a skinny GEMM may start while the kernel before it
 * finishes (its tail and our ramp-up overlap). Weights do not depend on that kernel, so the
 * first round of weight loads is issued before pdl_wait; x and y only after. pdl_trigger at
 * the top lets the next kernel launch early too (it waits for us before reading y). */

__device__ __forceinline__ void store(float *y, float v) { *y = v; }
__device__ __forceinline__ void store(__nv_bfloat16 *y, float v) { *y = __float2bfloat16_rn(v); }

template <int M, int R, typename OutT>
__global__ void __launch_bounds__(WARPS * 32) gemv_kernel(const __nv_bfloat16 *__restrict__ W,
                                                          const __nv_bfloat16 *__restrict__ x, int N, int K,
                                                          OutT *__restrict__ y) {
    pdl_trigger();
    __shared__ float part[WARPS][R * M];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int n0 = blockIdx.x * R;
    const uint4 *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++) /* a row past N re-reads row N-1; its sum is dropped */
        wr[r] = reinterpret_cast<const uint4 *>(W + (size_t)(n0 + r < N ? n0 + r : N - 1) * K);
    const uint4 *xr = reinterpret_cast<const uint4 *>(x);
    const int kc = K / 8; /* 16-byte chunks per row */
    float acc[R][M];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int m = 0; m < M; m++) acc[r][m] = 0.f;
    bool waited = false;
    for (int c0 = tid; c0 < kc; c0 += WARPS * 32 * U) {
        uint4 wv[U][R];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int c = c0 + WARPS * 32 * u;
                wv[u][r] = c < kc ? __ldcs(wr[r] + c) : make_uint4(0, 0, 0, 0); /* streamed once: evict first */
            }
        if (!waited) pdl_wait(), waited = true;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int c = c0 + WARPS * 32 * u;
            if (c >= kc) break;
            float wf[R][8];
#pragma unroll
            for (int r = 0; r < R; r++) bf16x8_to_f32(wv[u][r], wf[r]);
#pragma unroll
            for (int m = 0; m < M; m++) {
                float xf[8];
                bf16x8_to_f32(__ldg(xr + (size_t)m * kc + c), xf);
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int i = 0; i < 8; i++) acc[r][m] = fmaf(wf[r][i], xf[i], acc[r][m]);
            }
        }
    }
    if (!waited) pdl_wait();
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int m = 0; m < M; m++) {
            float v = acc[r][m];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (lane == 0) part[warp][r * M + m] = v;
        }
    __syncthreads();
    if (tid < R * M) {
        const int r = tid / M, m = tid % M;
        float v = 0.f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) v += part[w][tid];
        if (n0 + r < N) store(y + (size_t)m * N + n0 + r, v);
    }
}

template <int M, typename OutT>
cudaError_t launch_m(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int N, int K, OutT *y, const pl_cuda_gemv_ws *ws,
                     cudaStream_t s) {
    /* one row per block for a single token (x reuse buys nothing), else two */
    constexpr int R = M == 1 ? 1 : 2;
    return launch_pdl(gemv_kernel<M, R, OutT>, dim3((unsigned)((N + R - 1) / R)), dim3(WARPS * 32), 0, s, ws && ws->pdl, W, x,
                      N, K, y);
}

template <typename OutT>
cudaError_t launch(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y, const pl_cuda_gemv_ws *ws,
                   cudaStream_t s) {
    cudaError_t e;
    switch (M) {
    case 1: e = launch_m<1>(W, x, N, K, y, ws, s); break;
    case 2: e = launch_m<2>(W, x, N, K, y, ws, s); break;
    case 3: e = launch_m<3>(W, x, N, K, y, ws, s); break;
    case 4: e = launch_m<4>(W, x, N, K, y, ws, s); break;
    case 5: e = launch_m<5>(W, x, N, K, y, ws, s); break;
    case 6: e = launch_m<6>(W, x, N, K, y, ws, s); break;
    case 7: e = launch_m<7>(W, x, N, K, y, ws, s); break;
    case 8: e = launch_m<8>(W, x, N, K, y, ws, s); break;
    default: return cudaErrorInvalidValue;
    }
    return e != cudaSuccess ? e : cudaGetLastError();
}

/* ---- tensor-core variant: M <= 8 tokens, mma.sync m16n8k16 ----
 * A warp owns 16 W rows and the token tile of 8 over a slice of K; the 8 warps of a block
 * split K and meet in shared memory. Each lane loads 16 contiguous bytes of its two rows
 * (g, g+8) and of its token g per 32-wide k step: k is permuted the same way in A and B
 * (fragment pair j of the mma <-> bytes 4j..4j+3 of the lane's 16), which the dot product
 * does not see, so no shared-memory staging or ldmatrix is needed. (Tried: splitting K
 * further over a thread-block cluster with a distributed-shared-memory sum, to fill the
 * GPU when N has few 16-row tiles: slower on every shape, 2.1 vs 2.3 TB/s at 6144 rows.) */
constexpr int MW = 8; /* warps per block, splitting K (frag_warp_sum adds 8) */
constexpr int MU = 4; /* k steps of W loaded ahead */

/* K split over CTAs: each CTA of a tile calls this once its partial is stored; true in the
 * last of the n to arrive, which may then read the others' partials (and resets *counter
 * to 0 when done, so the counters are ready for a graph replay). */
__device__ __forceinline__ bool arrived_last(int *counter, int n) {
    __shared__ int last;
    __threadfence(); /* our partial is visible before we are counted */
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counter, 1) == n - 1;
    __syncthreads();
    if (last) __threadfence();
    return last;
}

/* arrived_last as one acq_rel atomic by thread 0 after the barrier, instead of a fence by
 * every thread, the atomic and a fence: the release is cumulative over the CTA's partial
 * stores (ordered before it by bar.sync), and the barrier after it orders the last CTA's
 * loads after the acquire (the arrive / wait of CUTLASS's generic barrier in one atomic) */
__device__ __forceinline__ bool arrived_last_ar(int *counter, int n) {
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) {
        int old;
        asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
        last = old == n - 1;
    }
    __syncthreads();
    return last;
}

/* The eight warps' m16n8 C fragments of one 16-row tile (rows g, g + 8; tokens 2 t, 2 t + 1),
 * added in warp order through red ([8][32][4] floats, shared): thread tid < 128 returns the
 * sum of element tid & 3 of lane tid >> 2 (frag_store's element), the others 0. */
__device__ __forceinline__ float frag_warp_sum(float *red, const float (&acc)[4]) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 4; i++) red[tid * 4 + i] = acc[i];
    __syncthreads();
    float v = 0.f;
    if (tid < 128)
#pragma unroll
        for (int w = 0; w < 8; w++) v += red[(w * 32 + (tid >> 2)) * 4 + (tid & 3)];
    return v;
}
/* thread tid < 128's element of the tile's [M][N] output (rows n0 .. n0 + 15) */
template <typename OutT> __device__ __forceinline__ void frag_store(OutT *y, int M, int N, int n0, float v) {
    const int ln = threadIdx.x >> 2, i = threadIdx.x & 3;
    const int row = n0 + (ln >> 2) + (i >= 2 ? 8 : 0), m = 2 * (ln & 3) + (i & 1);
    if (threadIdx.x < 128 && row < N && m < M) store(y + (size_t)m * N + row, v);
}

/* gridDim.y > 1: that many blocks split K for one 16-row tile; each leaves its partial tile
 * in ws ([split][tile][128] f32) and the last to arrive (cnt[tile], back to 0 after) adds
 * them up and stores: no second launch, and the counters are ready for a graph replay. */
template <typename OutT>
__global__ void __launch_bounds__(MW * 32) gemv_mma_kernel(const __nv_bfloat16 *__restrict__ W,
                                                           const __nv_bfloat16 *__restrict__ x, int M, int N, int K,
                                                           OutT *__restrict__ y, float *ws, int *cnt) {
    pdl_trigger();
    __shared__ float red[MW][32][4];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const int ks = gridDim.y, split = blockIdx.y;
    const int n0 = blockIdx.x * 16;
    const int r0 = n0 + g < N ? n0 + g : N - 1, r1 = n0 + g + 8 < N ? n0 + g + 8 : N - 1;
    const uint4 *w0 = reinterpret_cast<const uint4 *>(W + (size_t)r0 * K);
    const uint4 *w1 = reinterpret_cast<const uint4 *>(W + (size_t)r1 * K);
    const uint4 *xg = reinterpret_cast<const uint4 *>(x + (size_t)(g < M ? g : 0) * K);
    const int kc = K / 8; /* 16-byte chunks per row; step s covers chunks 4s .. 4s+3 */
    const int steps = (kc + 3) / 4, stride = MW * ks;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    bool waited = false;
    for (int s0 = split * MW + warp; s0 < steps; s0 += stride * MU) {
        uint4 a[MU][2];
#pragma unroll
        for (int u = 0; u < MU; u++) {
            const int c = (s0 + stride * u) * 4 + t;
            const bool ok = s0 + stride * u < steps && c < kc;
            a[u][0] = ok ? __ldcs(w0 + c) : make_uint4(0, 0, 0, 0); /* streamed once: evict first */
            a[u][1] = ok ? __ldcs(w1 + c) : make_uint4(0, 0, 0, 0);
        }
        if (!waited) pdl_wait(), waited = true;
#pragma unroll
        for (int u = 0; u < MU; u++) {
            const int s = s0 + stride * u;
            if (s >= steps) break;
            const int c = s * 4 + t;
            const uint4 b = g < M && c < kc ? __ldg(xg + c) : make_uint4(0, 0, 0, 0);
            const uint32_t lo[4] = {a[u][0].x, a[u][1].x, a[u][0].y, a[u][1].y};
            const uint32_t hi[4] = {a[u][0].z, a[u][1].z, a[u][0].w, a[u][1].w};
            mma_bf16(acc, lo, b.x, b.y); /* ptx.cuh */
            mma_bf16(acc, hi, b.z, b.w);
        }
    }
    if (!waited) pdl_wait();
    float v = frag_warp_sum(&red[0][0][0], acc);
    if (ks > 1) {
        if (tid < 128) ws[((size_t)split * gridDim.x + blockIdx.x) * 128 + tid] = v;
        if (!arrived_last(&cnt[blockIdx.x], ks)) return;
        if (tid < 128) {
            v = 0.f;
            for (int r = 0; r < ks; r++) v += __ldcg(ws + ((size_t)r * gridDim.x + blockIdx.x) * 128 + tid);
        }
        if (tid == 0) cnt[blockIdx.x] = 0;
    }
    frag_store(y, M, N, n0, v);
}

size_t cnt_bytes(int sms) { return ((size_t)3 * sms * sizeof(int) + 15) / 16 * 16; }

template <typename OutT>
cudaError_t launch_mma(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y,
                       const pl_cuda_gemv_ws *ws, cudaStream_t s) {
    if (M > 8) return cudaErrorInvalidValue;
    const int tiles = (N + 15) / 16;
    const int ks = pl_cuda_gemv_splits(N, K, ws ? ws->sms : 0);
    if (ks > 1 && (!ws || ws->bytes < pl_cuda_gemv_ws_bytes(PL_CUDA_GEMV_MMA, N, K, ws))) return cudaErrorInvalidValue;
    /* counters first, one per tile of any split shape (fewer than 3 * sms tiles), so every
     * shape finds its counters at zero; the partial tiles after them */
    int *cnt = ks > 1 ? static_cast<int *>(ws->ptr) : nullptr;
    float *part = ks > 1 ? reinterpret_cast<float *>(static_cast<char *>(ws->ptr) + cnt_bytes(ws->sms)) : nullptr;
    const cudaError_t e = launch_pdl(gemv_mma_kernel<OutT>, dim3((unsigned)tiles, (unsigned)ks), dim3(MW * 32), 0, s,
                                     ws && ws->pdl, W, x, M, N, K, y, part, cnt);
    return e != cudaSuccess ? e : cudaGetLastError();
}


/* ---- tile variant: 2..64 token rows (a batch of decode steps) ----
 * Weight streaming on tensor cores with A and B swapped: a CTA computes y^T for 128 weight
 * rows (the MMA's A operand) and every token (up to 64, its B operand), so the weights are
 * read once and each byte feeds every token. W and x tiles of 64 k go through a 4-stage
 * ring in shared memory (128-byte rows in the 128-byte XOR swizzle), filled by two TMA boxes
 * per stage (tensor maps over W and x; cp.async where the driver encodes no maps), the weights
 * with an L2 evict_first policy; x is staged because 64 tokens of x read per warp straight
 * from L2 (the M <= 8 kernel's way) would outrun L2. On sm_90a the two warpgroups each run
 * wgmma on 64 weight rows x all tokens straight from the ring (measured: 3-4% off the batch-32
 * step and 10-15% off a batch-64 step on this kernel, against 8 warps of ldmatrix + mma.sync,
 * which the compute_90 PTX keeps).
 * K is split over CTAs so that about two CTAs per SM stream at once (one past 16 tokens). Up
 * to 16 tokens the last CTA of a tile adds the partials; past 16 the splits of a tile form a
 * thread-block cluster (at most 8) and add through distributed shared memory (before: 32 KiB
 * partial tiles in global memory and a second kernel to add them). */
constexpr int TW = 8, TBM = TW * 16, TBK = 64, TST = 4;
constexpr int T_WBYTES = TBM * TBK * 2, T_XBYTES = 64 * TBK * 2;
constexpr int T_STAGE = T_WBYTES + T_XBYTES;
constexpr int T_SMEM = TST * T_STAGE + 1024 + TST * 8; /* 97 KiB (1 KiB to align, TMA stage barriers): two CTAs per SM */
static_assert(PL_CUDA_GEMV_ALONE_SMEM >= T_SMEM && 2 * (PL_CUDA_GEMV_ALONE_SMEM + 1024) > 228 * 1024, "one tile CTA per SM");
constexpr int T_PART = TBM * 16; /* floats of a partial tile (up to 16 tokens; more add in a cluster) */

/* a TMA ring's start: thread 0 fetches both tensor-map descriptors and sets up one barrier
 * per stage, then the CTA meets (every thread waits on those barriers) */
__device__ __forceinline__ void tma_ring_init(const CUtensorMap *tw, const CUtensorMap *tx, uint32_t bars) {
    if (threadIdx.x == 0) {
        tmap_prefetch(tw);
        tmap_prefetch(tx);
#pragma unroll
        for (int j = 0; j < TST; ++j) mbar_init(bars + j * 8, 1);
        mbar_init_fence();
    }
    __syncthreads();
}

__device__ __forceinline__ uint32_t swz128(int r, int ch) { return (uint32_t)(r * 128 + ((ch ^ (r & 7)) << 4)); }

/* C fragment of warp w, lane (g, t), token tile nt: i = 0, 1: row g, tokens 2t, 2t + 1;
 * i = 2, 3: row g + 8. */
template <typename OutT>
__device__ __forceinline__ void tile_store(OutT *y, int M, int N, int n0, int warp, int lane, int nt, int i, float v) {
    const int row = n0 + warp * 16 + (lane >> 2) + (i >= 2 ? 8 : 0), tok = nt * 8 + 2 * (lane & 3) + (i & 1);
    if (row < N && tok < M) store(y + (size_t)tok * N + row, v);
}

/* The greedy head's epilogue (OutT = unsigned long long: y holds one argmax key per token,
 * zero before the launch): the CTA's largest logit of each token over its 128 weight rows,
 * as argmax_key, through a [warp][token] table in the idle ring and one atomicMax per token,
 * so the [M, N] logits are never stored (for the LM head at 64 rows: 39 MB written and read
 * back by the argmax kernel). The logits are the accumulators tile_store would store, so the
 * choice is the f32 path's. */
constexpr int T_RED = 32768; /* ring offset of the table: past a cluster's partials (<= 32 KiB) */
__device__ __forceinline__ void argmax_frag(unsigned long long *red, int N, int n0, int warp, int lane, int nt, const float *a) {
    const int r0 = n0 + warp * 16 + (lane >> 2), r1 = r0 + 8;
    unsigned long long k[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) { /* tokens nt * 8 + 2 t + j: rows g (a[j]) and g + 8 (a[2 + j]) */
        const unsigned long long k0 = r0 < N ? argmax_key(a[j], r0) : 0ull, k1 = r1 < N ? argmax_key(a[2 + j], r1) : 0ull;
        k[j] = k0 > k1 ? k0 : k1;
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
            const unsigned long long c = __shfl_xor_sync(0xffffffffu, k[j], o);
            k[j] = c > k[j] ? c : k[j];
        }
    }
    if (lane < 4) red[warp * 64 + nt * 8 + 2 * lane] = k[0], red[warp * 64 + nt * 8 + 2 * lane + 1] = k[1];
}
/* after every argmax_frag of the CTA: token tiles nt with (nt - nt0) % nstep == 0 were written */
__device__ __forceinline__ void argmax_flush(const unsigned long long *red, unsigned long long *keys, int M, int nt0, int nstep) {
    __syncthreads();
    const int tok = threadIdx.x, nt = tok >> 3;
    if (tok < M && nt >= nt0 && (nt - nt0) % nstep == 0) {
        unsigned long long k = 0;
#pragma unroll
        for (int w = 0; w < TW; ++w) k = red[w * 64 + tok] > k ? red[w * 64 + tok] : k;
        if (k) atomicMax(keys + tok, k);
    }
}

/* NP: pairs of 8-token tiles (tokens up to 16 * NP). TMA: each stage is two tensor-map boxes
 * (128 weight rows x 64 k, 16 * NP token rows x 64 k; out-of-range rows and k read as zero)
 * that one thread issues and an mbarrier per stage counts, instead of 16-byte cp.async from
 * every thread; the boxes land in the same 128-byte swizzle. */
template <int NP, typename OutT, bool TMA>
__global__ void __launch_bounds__(TW * 32, 2)
    gemm_tile_kernel(const __nv_bfloat16 *__restrict__ W, const __nv_bfloat16 *__restrict__ x, int M, int N, int K,
                     OutT *__restrict__ y, float *ws, int *cnt, const __grid_constant__ CUtensorMap tw,
                     const __grid_constant__ CUtensorMap tx, int trig) {
    const bool ar = trig & 16; /* the split fixup arrives by arrived_last_ar (launch_tile) */
    const int npre = TMA && (trig & 32) ? TST : TST - 1; /* weight stages before the PDL wait (launch_tile) */
    trig &= 15;
    if (trig == 0) pdl_trigger();
    PL_DIAG_SCOPE(1, N, K, (unsigned long long)M | (unsigned long long)gridDim.y << 16 | (unsigned long long)NP << 24 | (unsigned long long)TMA << 32);
    extern __shared__ __align__(128) unsigned char tsm[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int tile = blockIdx.x, split = blockIdx.y, ks = gridDim.y;
    const int n0 = tile * TBM, KT = (K + TBK - 1) / TBK;
    const int kt0 = (int)((long long)KT * split / ks), nkt = (int)((long long)KT * (split + 1) / ks) - kt0;
    const uint32_t sb = (smem_u32(tsm) + 1023u) & ~1023u; /* the swizzle pattern repeats every 1 KiB */
    /* weights are read once per step: evict them first, so the stream does not push what the
     * kernels around it read back out of L2 (activations, split partials, counters, norm
     * weights; not profiled which). Measured on the H200, two interleaved calls: batch 4 steps
     * 4-4.5% faster, batch 16 2.5-3.7%, batch 64 2.7-2.9% */
    const uint64_t wpol = l2_evict_first();
    auto load_w = [&](int st, int kt) {
#pragma unroll
        for (int i = 0; i < T_WBYTES / 16 / (TW * 32); ++i) {
            const int c = tid + i * TW * 32, r = c >> 3, ch = c & 7, row = n0 + r, kk = kt * TBK + ch * 8;
            const bool ok = row < N && kk < K;
            cp_async16_hint(sb + st * T_STAGE + swz128(r, ch), ok ? (const void *)(W + (size_t)row * K + kk) : (const void *)W,
                            ok ? 16 : 0, wpol);
        }
    };
    auto load_x = [&](int st, int kt) {
        for (int c = tid; c < NP * 16 * 8; c += TW * 32) {
            const int r = c >> 3, ch = c & 7, kk = kt * TBK + ch * 8;
            const bool ok = r < M && kk < K;
            cp_async16(sb + st * T_STAGE + T_WBYTES + swz128(r, ch),
                       ok ? (const void *)(x + (size_t)r * K + kk) : (const void *)x, ok ? 16 : 0);
        }
    };
    const uint32_t bars = sb + TST * T_STAGE; /* TMA: one barrier per stage */
    constexpr unsigned kTx = T_WBYTES + NP * 16 * TBK * 2;
    auto tma_w = [&](int st, int kt) {
        mbar_expect_tx(bars + st * 8, kTx);
        tma_load_2d(sb + st * T_STAGE, &tw, kt * TBK, n0, bars + st * 8, wpol);
    };
    auto tma_x = [&](int st, int kt) { tma_load_2d(sb + st * T_STAGE + T_WBYTES, &tx, kt * TBK, 0, bars + st * 8); };
    if (TMA) tma_ring_init(&tw, &tx, bars);
    /* weights do not depend on the kernel before us: their first npre stages go out before the
     * wait (TST - 1, or all TST up to 16 tokens: launch_tile), the rest after it (a fifth stage of
     * 18 KiB up to 16 tokens was slower). A stage is refilled as soon as every warp is done with it,
     * not once the next one has landed, so all TST stages are in flight while the warps wait
     * (measured on the H200, four rounds on one card: batch 2 and 4 steps 3-4.5% faster, 16
     * about 1%, 64 level) */
#pragma unroll
    for (int j = 0; j < TST; ++j)
        if (j < npre && j < nkt) {
            if (!TMA) load_w(j, kt0 + j);
            else if (tid == 0) tma_w(j, kt0 + j);
        }
    pdl_wait();
    if (trig == 1) pdl_trigger();
    PL_DIAG_MARK(4);
#pragma unroll
    for (int j = 0; j < TST; ++j) {
        if (j < nkt) {
            if (!TMA) {
                if (j == TST - 1) load_w(j, kt0 + j);
                load_x(j, kt0 + j);
            } else if (tid == 0) {
                if (j >= npre) tma_w(j, kt0 + j);
                tma_x(j, kt0 + j);
            }
        }
        if (!TMA) cp_async_commit();
    }
    float acc[2 * NP][4];
#pragma unroll
    for (int i = 0; i < 2 * NP; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
    for (int i = 0; i < nkt; ++i) {
        if ((trig == 3 && i == nkt / 2) || (trig == 4 && i == nkt / 4) || (trig == 5 && i == 3 * nkt / 4)) pdl_trigger();
        if (TMA) {
            mbar_wait(bars + (i % TST) * 8, (unsigned)(i / TST) & 1u);
        } else {
            cp_async_wait<TST - 1>();
#ifdef PL_HAVE_WGMMA
            fence_proxy_async(); /* our cp.async writes, before wgmma reads them */
#endif
            __syncthreads(); /* stage i landed for all */
        }
        if (i == 0) PL_DIAG_MARK(5);
        const uint32_t wsm = sb + (i % TST) * T_STAGE, xsm = wsm + T_WBYTES;
#ifdef PL_HAVE_WGMMA
        /* each warpgroup: its 64 weight rows x all 16 * NP token rows, four k16 steps */
        const uint64_t da = wgmma_desc_sw128(wsm + (warp >> 2) * 64 * 128), db = wgmma_desc_sw128(xsm);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < TBK / 16; ++kk) wgmma_bf16<16 * NP>(acc, da + 2 * kk, db + 2 * kk);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(acc);
#else
#pragma unroll
        for (int kk = 0; kk < TBK / 16; ++kk) {
            uint32_t a[4];
            ldmatrix_x4(wsm + swz128(warp * 16 + (lane & 15), kk * 2 + (lane >> 4)), a[0], a[1], a[2], a[3]);
#pragma unroll
            for (int np = 0; np < NP; ++np) {
                uint32_t b0, b1, b2, b3;
                ldmatrix_x4(xsm + swz128(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)), b0, b1, b2, b3);
                mma_bf16(acc[2 * np], a, b0, b1);
                mma_bf16(acc[2 * np + 1], a, b2, b3);
            }
        }
#endif
        __syncthreads(); /* every warp is done with stage i: refill its slot with stage i + TST */
        if (i + TST < nkt) {
            if (!TMA) {
                load_w(i % TST, kt0 + i + TST);
                load_x(i % TST, kt0 + i + TST);
            } else if (tid == 0) {
                tma_w(i % TST, kt0 + i + TST);
                tma_x(i % TST, kt0 + i + TST);
            }
        }
        if (!TMA) cp_async_commit();
    }
    if (trig == 2) pdl_trigger();
    if (!TMA) cp_async_wait<0>();
    const int nt_live = (M + 7) / 8; /* token tiles holding real tokens */
    constexpr bool kKeys = sizeof(OutT) == 8; /* the greedy head (y: argmax keys) */
    unsigned long long *red = reinterpret_cast<unsigned long long *>(tsm + (sb - smem_u32(tsm)) + T_RED);
    if (ks > 1 && NP > 1) {
        /* past 16 tokens the K splits of a tile are one thread-block cluster: each leaves its
         * partial in its own shared memory, and split r adds token tiles r, r + ks, ... of all
         * of them through distributed shared memory, in split order */
        namespace cg = cooperative_groups;
        cg::cluster_group cl = cg::this_cluster();
        __syncthreads(); /* every warp is done with the ring */
        float4 *mine = reinterpret_cast<float4 *>(tsm + (sb - smem_u32(tsm)));
#pragma unroll
        for (int nt = 0; nt < 2 * NP; ++nt)
            if (nt < nt_live) mine[nt * TW * 32 + tid] = make_float4(acc[nt][0], acc[nt][1], acc[nt][2], acc[nt][3]);
        cl.sync();
        for (int nt = (int)cl.block_rank(); nt < nt_live; nt += ks) {
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int r = 0; r < 8; ++r) /* ks <= 8 */
                if (r < ks) {
                    const float4 q = *cl.map_shared_rank(mine + nt * TW * 32 + tid, r);
                    v.x += q.x, v.y += q.y, v.z += q.z, v.w += q.w;
                }
            const float a[4] = {v.x, v.y, v.z, v.w};
            if constexpr (kKeys) argmax_frag(red, N, n0, warp, lane, nt, a);
            else
#pragma unroll
                for (int i = 0; i < 4; ++i) tile_store(y, M, N, n0, warp, lane, nt, i, a[i]);
        }
        if constexpr (kKeys) argmax_flush(red, y, M, (int)cl.block_rank(), ks);
        cl.sync(); /* the others are done reading our partial */
        return;
    }
    if (ks > 1 && !cnt) {
        /* up to 16 tokens, the splits left for the consumer to add (pl_cuda_gemv_parts_bf16):
         * split r's partial product as f32 [M][N] at ws + r * M * N, and no tail here: the
         * last CTA's fence, count and partial loads were 2-3 us on the critical path of
         * every o and down projection at batch 4 (measured CTA by CTA on the H200) */
        if constexpr (!kKeys) {
            float *mine = ws + (size_t)split * M * N;
#pragma unroll
            for (int nt = 0; nt < 2 * NP; ++nt)
                if (nt < nt_live)
#pragma unroll
                    for (int i = 0; i < 4; ++i) tile_store(mine, M, N, n0, warp, lane, nt, i, acc[nt][i]);
        }
        return;
    }
    if (ks > 1) { /* up to 16 tokens: partial tile, fragment order: [nt][thread] float4 */
        float *mine = ws + ((size_t)split * gridDim.x + tile) * T_PART;
#pragma unroll
        for (int nt = 0; nt < 2 * NP; ++nt)
            if (nt < nt_live)
                *reinterpret_cast<float4 *>(mine + ((size_t)nt * TW * 32 + tid) * 4) =
                    make_float4(acc[nt][0], acc[nt][1], acc[nt][2], acc[nt][3]);
        /* a float4 or two per thread and split, so the last CTA of the tile adds them
         * instead of a launch more */
        if (!(ar ? arrived_last_ar(&cnt[tile], ks) : arrived_last(&cnt[tile], ks))) return;
        constexpr int FQ = 8; /* NP == 1 here */
#pragma unroll
        for (int nt = 0; nt < 2 * NP; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.f;
        for (int r0 = 0; r0 < ks; r0 += FQ) { /* FQ splits in flight (one L2 round trip for up to 8), added in order */
            float4 q[FQ][2 * NP];
#pragma unroll
            for (int j = 0; j < FQ; ++j)
#pragma unroll
                for (int nt = 0; nt < 2 * NP; ++nt)
                    q[j][nt] = r0 + j < ks && nt < nt_live
                                   ? __ldcg(reinterpret_cast<const float4 *>(ws + ((size_t)(r0 + j) * gridDim.x + tile) * T_PART +
                                                                            ((size_t)nt * TW * 32 + tid) * 4))
                                   : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int j = 0; j < FQ; ++j)
#pragma unroll
                for (int nt = 0; nt < 2 * NP; ++nt)
                    acc[nt][0] += q[j][nt].x, acc[nt][1] += q[j][nt].y, acc[nt][2] += q[j][nt].z, acc[nt][3] += q[j][nt].w;
        }
        if (tid == 0) cnt[tile] = 0;
    }
    if constexpr (kKeys) {
#pragma unroll
        for (int nt = 0; nt < 2 * NP; ++nt)
            if (nt < nt_live) argmax_frag(red, N, n0, warp, lane, nt, acc[nt]);
        argmax_flush(red, y, M, 0, 1);
    } else {
#pragma unroll
        for (int nt = 0; nt < 2 * NP; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) tile_store(y, M, N, n0, warp, lane, nt, i, acc[nt][i]);
    }
}

/* ---- k-sliced thin tiles: 2..8 token rows, no K split across CTAs ----
 * The tile kernel splits K over CTAs when its 128-row tiles are too few for the SMs (the o and
 * down projections at batch 2-8: 20 tiles, 13 splits), and the splits' f32 partials then
 * cost an L2 round trip on the critical path: in the GEMM's last CTA, or in the add + RMSNorm
 * after it (~4 us per norm at batch 4, ~8 us a layer: a diagnostic without the sums took the
 * step from 1.33x to 1.21-1.23x of its roofline). Here a CTA takes 16 weight rows over all of
 * K instead (160 CTAs at N = 2560), its 8 warps slicing K: a stage of 512 k is eight TMA boxes
 * of 16 rows x 64 k, one per warp, with the matching 8 token rows x 64 k of x, so the ring
 * holds the same 64 KiB of weights in flight as the tile kernel's. The warps' C fragments add
 * in warp order through shared memory at the end: no partial leaves the CTA. */
constexpr int KS_W = 16 * TBK * 2, KS_X = 8 * TBK * 2;         /* one warp's boxes: 2 KiB, 1 KiB */
constexpr int KS_STAGE = TW * (KS_W + KS_X), KS_K = TW * TBK; /* 24 KiB and 512 k a stage */
static_assert(TST * KS_STAGE + 1024 + TST * 8 <= T_SMEM, "k-sliced ring fits the tile kernel's shared memory");
static_assert(TW == 8, "frag_warp_sum adds 8 warps' fragments");

template <typename OutT>
__global__ void __launch_bounds__(TW * 32, 2)
    gemm_kslice_kernel(int M, int N, int K, OutT *__restrict__ y, const __grid_constant__ CUtensorMap tw,
                       const __grid_constant__ CUtensorMap tx, int trig) {
    const int npre = trig & 32 ? TST : TST - 1; /* weight stages before the PDL wait (launch_tile) */
    trig &= 15;
    if (trig == 0) pdl_trigger();
    PL_DIAG_SCOPE(1, N, K, (unsigned long long)M | 1ull << 16 | 1ull << 24 | 1ull << 32);
    extern __shared__ __align__(128) unsigned char tsm[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int n0 = blockIdx.x * 16, S = (K + KS_K - 1) / KS_K;
    const uint32_t sb = (smem_u32(tsm) + 1023u) & ~1023u, bars = sb + TST * KS_STAGE;
    const uint64_t wpol = l2_evict_first(); /* weights are read once per step (the tile kernel's reason) */
    auto tma_w = [&](int st, int s) {
        mbar_expect_tx(bars + st * 8, KS_STAGE);
#pragma unroll
        for (int w = 0; w < TW; ++w) tma_load_2d(sb + st * KS_STAGE + w * KS_W, &tw, s * KS_K + w * TBK, n0, bars + st * 8, wpol);
    };
    auto tma_x = [&](int st, int s) {
#pragma unroll
        for (int w = 0; w < TW; ++w) tma_load_2d(sb + st * KS_STAGE + TW * KS_W + w * KS_X, &tx, s * KS_K + w * TBK, 0, bars + st * 8);
    };
    tma_ring_init(&tw, &tx, bars);
    /* as the tile kernel: the weights of the first npre stages before the PDL wait */
    if (tid == 0)
#pragma unroll
        for (int j = 0; j < TST; ++j)
            if (j < npre && j < S) tma_w(j, j);
    pdl_wait();
    if (trig == 1) pdl_trigger();
    PL_DIAG_MARK(4);
    if (tid == 0)
#pragma unroll
        for (int j = 0; j < TST; ++j)
            if (j < S) {
                if (j >= npre) tma_w(j, j);
                tma_x(j, j);
            }
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int i = 0; i < S; ++i) {
        if ((trig == 3 && i == S / 2) || (trig == 4 && i == S / 4) || (trig == 5 && i == 3 * S / 4)) pdl_trigger();
        mbar_wait(bars + (i % TST) * 8, (unsigned)(i / TST) & 1u);
        if (i == 0) PL_DIAG_MARK(5);
        const uint32_t wsm = sb + (i % TST) * KS_STAGE + warp * KS_W, xsm = sb + (i % TST) * KS_STAGE + TW * KS_W + warp * KS_X;
#pragma unroll
        for (int kk = 0; kk < TBK / 16; kk += 2) {
            uint32_t b[4]; /* x rows (tokens) 0-7, 16-byte chunks 2 kk .. 2 kk + 3: two k16 steps */
            ldmatrix_x4(xsm + swz128(lane & 7, kk * 2 + (lane >> 3)), b[0], b[1], b[2], b[3]);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                uint32_t a[4];
                ldmatrix_x4(wsm + swz128(lane & 15, (kk + h) * 2 + (lane >> 4)), a[0], a[1], a[2], a[3]);
                mma_bf16(acc, a, b[2 * h], b[2 * h + 1]);
            }
        }
        __syncthreads(); /* every warp is done with stage i: refill its slot with stage i + TST */
        if (tid == 0 && i + TST < S) {
            tma_w(i % TST, i + TST);
            tma_x(i % TST, i + TST);
        }
    }
    if (trig == 2) pdl_trigger();
    /* the warps' fragments added in warp order through the ring (every stage landed and was read) */
    frag_store(y, M, N, n0, frag_warp_sum(reinterpret_cast<float *>(tsm + (sb - smem_u32(tsm))), acc));
}

/* Whether the k-sliced kernel takes a tile-kernel shape: a shape the tile kernel would split
 * over K, and 16-row tiles for one wave of two CTAs per SM with at least half the SMs busy
 * (the o and down projections of Qwen3-4B: 160 CTAs); ws->kslice 0 (AUTO) from 6 tokens,
 * 2 from 2 tokens, up to 8, 1 never. Measured in the decode step on the H200 (o and down,
 * k-sliced against split with the partials in the norm): batches 6-8 2-5% faster, batch 5
 * 1.5%, batch 4 3% and batch 2 6% slower; but below 8 tokens the x boxes' rows past M were
 * out of range, and such rows were slow: with x readable to 8 rows (ws->x_rows, the forward
 * pass's buffers) batch 4 took 2.547-2.569 ms against 2.603-2.608 split and 2.630-2.669
 * k-sliced with short boxes (twenty-fifth session, run 8), so AUTO starts at 2 tokens there. */
bool kslice_takes(int M, int N, int K, const pl_cuda_gemv_ws *ws) {
    if (!ws || ws->kslice == 1 || ws->tile_copy == 1 || M < (ws->kslice == 2 || ws->x_rows >= 8 ? 2 : 6) || M > 8 || ws->sms <= 0)
        return false;
    const int tiles = (N + 15) / 16;
    return pl_cuda_gemv_tile_splits(N, K, M, ws) > 1 && 2 * tiles >= ws->sms && tiles <= 2 * ws->sms;
}

template <typename OutT>
cudaError_t launch_kslice(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y, int pdl, int x_rows,
                          cudaStream_t s, bool *taken, int trig) {
    CUtensorMap tw, tx;
    memset(&tw, 0, sizeof tw);
    memset(&tx, 0, sizeof tx);
    *taken = pl_cuda_tmap_2d_bf16(&tw, W, (uint64_t)K, (uint64_t)N, (uint64_t)K * 2, TBK, 16) &&
             pl_cuda_tmap_2d_bf16(&tx, x, (uint64_t)K, (uint64_t)(x_rows > M ? (x_rows < 8 ? x_rows : 8) : M), (uint64_t)K * 2, TBK, 8);
    if (!*taken) return cudaSuccess; /* no tensor maps: the tile kernel's cp.async path */
    cudaError_t e = cudaFuncSetAttribute(gemm_kslice_kernel<OutT>, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM);
    if (e != cudaSuccess) return e;
    return launch_pdl(gemm_kslice_kernel<OutT>, dim3((unsigned)((N + 15) / 16)), dim3(TW * 32), (size_t)T_SMEM, s, pdl, M, N, K, y,
                      tw, tx, trig);
}

/* smem: the dynamic shared memory asked for, T_SMEM or more (more only to keep other CTAs off the SM) */
template <int NP, typename OutT, bool TMA>
cudaError_t launch_tile_kern(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y, int ks, float *part,
                             int *cnt, int pdl, int smem, const CUtensorMap &tw, const CUtensorMap &tx, cudaStream_t s, int trig) {
    cudaError_t e = cudaFuncSetAttribute(gemm_tile_kernel<NP, OutT, TMA>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
    const int tiles = (N + TBM - 1) / TBM;
    /* past 16 tokens the K splits of a tile are one cluster (ks <= 8, the portable size) */
    return launch_pdl_cluster(gemm_tile_kernel<NP, OutT, TMA>, dim3((unsigned)tiles, (unsigned)ks), dim3(TW * 32), (size_t)smem,
                              s, pdl, NP > 1 ? (unsigned)ks : 1u, W, x, M, N, K, y, part, cnt, tw, tx, trig);
}

template <int NP, typename OutT>
cudaError_t launch_tile_np(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y, int ks, float *part,
                           int *cnt, int pdl, int copy, int smem, cudaStream_t s, int trig) {
    CUtensorMap tw, tx;
    memset(&tw, 0, sizeof tw);
    memset(&tx, 0, sizeof tx);
    /* TMA boxes where the driver encodes the maps, else cp.async. Default: TMA at every size
     * (measured in the batch step on the H200: 16 rows 2-3% and 32 rows 4-5% faster; at 4 rows
     * 1-1.4% slower until the o and down projections' split sums moved into the norm after
     * them; since then level to 2.5% faster at 2-8 rows in two calls. Not profiled why; the
     * next GEMM's first stages, in flight while the norm loads the partials, are then a few
     * bulk copies instead of ~12 cp.async per thread) */
    const bool tma = (copy == 2 || copy == 0) && pl_cuda_tmap_2d_bf16(&tw, W, (uint64_t)K, (uint64_t)N, (uint64_t)K * 2, TBK, TBM) &&
                     pl_cuda_tmap_2d_bf16(&tx, x, (uint64_t)K, (uint64_t)M, (uint64_t)K * 2, TBK, 16 * NP);
    return tma ? launch_tile_kern<NP, OutT, true>(W, x, M, N, K, y, ks, part, cnt, pdl, smem, tw, tx, s, trig)
               : launch_tile_kern<NP, OutT, false>(W, x, M, N, K, y, ks, part, cnt, pdl, smem, tw, tx, s, trig);
}

/* parts: leave the K splits unsummed (M <= 16 and more than one split only) */
template <typename OutT>
cudaError_t launch_tile(const __nv_bfloat16 *W, const __nv_bfloat16 *x, int M, int N, int K, OutT *y,
                        const pl_cuda_gemv_ws *ws, cudaStream_t s, bool parts = false) {
    if (M > PL_CUDA_GEMV_TILE_MAX_M) return cudaErrorInvalidValue;
    /* the benchmark hook's trigger point where its kinds take this shape, else at entry */
    const int kind = N < K ? 1 : N <= 4 * K ? 2 : 4, trig = ws && ((ws->tile_trigger >> 4) & kind) ? ws->tile_trigger & 15 : 0;
    /* the kinds (tile_pre_all) whose CTAs send all TST weight stages before the PDL wait, not
     * TST - 1: AUTO all of them up to 16 rows. The CTAs wait there behind the attention, its
     * merge or a norm, while the HBM is mostly idle. Measured on the H200, paired per step over
     * replayed decode schedules (PERF.md, forty-fifth session): the seed trace's batch-4 steps
     * 0.2-0.5% faster in six pairings on three cards, batch 2 0.1-0.7%, batch 8 0-0.2%, 16 level;
     * no single kind alone gained (o, qkv 0.1-0.3% slower). Past 16 rows level at 32 and 64 rows
     * with all kinds, qkv's alone slower at 64: TST - 1 as before. */
    const int pre_all = !ws ? 0 : ws->tile_pre_all ? ws->tile_pre_all & 15 : M <= 16 ? 15 : 0;
    if constexpr (sizeof(OutT) != 8) /* not the greedy head */
        if (!parts && kslice_takes(M, N, K, ws)) {
            bool taken = false;
            const int kp = pre_all & (K <= 2 * N ? 1 : 2) ? 32 : 0;
            cudaError_t e = launch_kslice(W, x, M, N, K, y, ws->pdl, ws->x_rows, s, &taken, trig | kp);
            if (e == cudaSuccess && taken) e = cudaGetLastError();
            if (e == cudaSuccess && taken && ws->kslice_runs) ++*ws->kslice_runs;
            if (taken || e != cudaSuccess) return e;
        }
    int ks = pl_cuda_gemv_tile_splits(N, K, M, ws);
    if (ks > 1 && (!ws || ws->bytes < pl_cuda_gemv_ws_bytes(PL_CUDA_GEMV_TILE, N, K, ws))) return cudaErrorInvalidValue;
    if (parts && (M > 16 || ks < 2)) return cudaErrorInvalidValue;
    int *cnt = ks > 1 && !parts ? static_cast<int *>(ws->ptr) : nullptr;
    float *part = ks > 1 ? reinterpret_cast<float *>(static_cast<char *>(ws->ptr) + cnt_bytes(ws->sms)) : nullptr;
    const int pdl = ws && ws->pdl, copy = ws ? ws->tile_copy : 0;
    if (M > 16 && ks > 8) ks = 8; /* one cluster per tile */
    /* one CTA per SM where asked and the launch is one wave: the block scheduler otherwise fills
     * the SMs that free first two CTAs at a time (Qwen3-4B's 96 qkv CTAs at 64 rows ran on ~74
     * SMs, 22 of them shared, as the fused MLP's CTAs left; PERF.md, thirty-second session) */
    const int tiles = (N + TBM - 1) / TBM;
    const int smem = ws && ws->tile_alone > 0 && M > ws->tile_alone && tiles * ks <= ws->sms ? PL_CUDA_GEMV_ALONE_SMEM : T_SMEM;
    cudaError_t e;
    /* the split fixup's arrival (tile_fixup): one acq_rel atomic from 3 rows (AUTO). Measured on
     * the H200, paired per step over replayed decode schedules (PERF.md, forty-first session):
     * batches 4, 8 and 16 0.3-0.7% faster than a fence by every thread (the qkv projection's
     * tail, which the decode attention waits for); batch 2 0.5-0.6% slower in one call, so 2
     * rows keep the fences (a weak reason: identical code paired there read 0.4% in another) */
    const int fx = ws ? ws->tile_fixup : 0;
    const int tt = trig | (fx == 2 || (fx == 0 && M >= 3) ? 16 : 0) | (pre_all & (kind == 2 ? 4 : kind == 4 ? 8 : 0) ? 32 : 0);
    if (M <= 16) e = launch_tile_np<1>(W, x, M, N, K, y, ks, part, cnt, pdl, copy, smem, s, tt);
    else if (M <= 32) e = launch_tile_np<2>(W, x, M, N, K, y, ks, part, cnt, pdl, copy, smem, s, tt);
    else if (M <= 48) e = launch_tile_np<3>(W, x, M, N, K, y, ks, part, cnt, pdl, copy, smem, s, tt);
    else e = launch_tile_np<4>(W, x, M, N, K, y, ks, part, cnt, pdl, copy, smem, s, tt);
    return e != cudaSuccess ? e : cudaGetLastError();
}

} // namespace

PL_DIAG_SETTER(pl_diag_set_gemv)

extern "C" int pl_cuda_gemv_supported(int m, int n, int k, const void *w, const void *x, const void *y) {
    const uintptr_t a = (uintptr_t)w | (uintptr_t)x;
    return m >= 1 && m <= PL_CUDA_GEMV_TILE_MAX_M && n >= 1 && k >= 8 && k % 8 == 0 && (a & 15) == 0 &&
           ((uintptr_t)y & 3) == 0;
}

extern "C" int pl_cuda_gemv_splits(int n, int k, int sms) {
    /* a few tiles per SM; fewer leave some SMs a whole tile behind the others at the end */
    const int tiles = (n + 15) / 16, steps = (k / 8 + 3) / 4;
    if (sms <= 0 || tiles >= 2 * sms) return 1; /* measured: 384 tiles on 132 SMs split in 2 ran slower */
    int ks = (3 * sms + tiles - 1) / tiles;
    if (ks > 4) ks = 4;
    while (ks > 1 && ks * MW * 2 > steps) ks--; /* every warp keeps two k steps or more */
    return ks;
}

extern "C" int pl_cuda_gemv_kslice(int m, int n, int k, const pl_cuda_gemv_ws *ws) { return kslice_takes(m, n, k, ws); }

extern "C" int pl_cuda_gemv_tile_splits(int n, int k, int m, const pl_cuda_gemv_ws *ws) {
    /* about two CTAs per SM in one wave up to 16 rows; one past that, where the splits of a
     * tile add in a cluster (measured on the H200: 2-5% off the batch-48 and batch-64 steps,
     * 1.9-3.3% off batch 17-32: fewer and smaller clusters), at least 4 k tiles (256 k) per CTA,
     * at most 16 splits (a split fixup of more partials costs more than the CTAs gain); ws may
     * tune these */
    const int tiles = (n + TBM - 1) / TBM, kt = (k + TBK - 1) / TBK, sms = ws ? ws->sms : 0;
    if (sms <= 0) return 1;
    const int per_sm = ws->tile_ctas_per_sm > 0 ? (ws->tile_ctas_per_sm < 4 ? ws->tile_ctas_per_sm : 4)
                                                : m > 16 ? 1 : 2; /* counters: < 3 * sms */
    const int max_ks = ws->tile_max_splits > 0 ? ws->tile_max_splits : 16;
    const int min_kt = ws->tile_min_ktiles > 0 ? ws->tile_min_ktiles : 4;
    int ks = per_sm * sms / tiles;
    if (ks > kt / min_kt) ks = kt / min_kt;
    if (ks > max_ks) ks = max_ks;
    return ks < 1 ? 1 : ks;
}

extern "C" size_t pl_cuda_gemv_ws_bytes(int variant, int n, int k, const pl_cuda_gemv_ws *ws) {
    const int sms = ws ? ws->sms : 0;
    if (variant == PL_CUDA_GEMV_TILE) {
        /* partials only up to 16 rows, whose split count is the largest (m = 0 stands for them) */
        const int ks = pl_cuda_gemv_tile_splits(n, k, 0, ws), tiles = (n + TBM - 1) / TBM;
        /* counters for tiles that split: fewer than per_sm * sms / 2 */
        return ks > 1 ? cnt_bytes(sms) + (size_t)ks * tiles * T_PART * sizeof(float) : 0;
    }
    if (variant != PL_CUDA_GEMV_MMA) return 0;
    const int ks = pl_cuda_gemv_splits(n, k, sms), tiles = (n + 15) / 16;
    return ks > 1 ? cnt_bytes(sms) + (size_t)ks * tiles * 128 * sizeof(float) : 0;
}

extern "C" int pl_cuda_gemv_argmax_bf16(const void *w, const void *x, int m, int n, int k, unsigned long long *keys,
                                        const pl_cuda_gemv_ws *ws, void *stream) {
    return (int)launch_tile(static_cast<const __nv_bfloat16 *>(w), static_cast<const __nv_bfloat16 *>(x), m, n, k, keys, ws,
                            static_cast<cudaStream_t>(stream));
}

extern "C" int pl_cuda_gemv_parts_bf16(const void *w, const void *x, int m, int n, int k, const pl_cuda_gemv_ws *ws,
                                       void *stream) {
    return (int)launch_tile(static_cast<const __nv_bfloat16 *>(w), static_cast<const __nv_bfloat16 *>(x), m, n, k,
                            static_cast<float *>(nullptr), ws, static_cast<cudaStream_t>(stream), true);
}

extern "C" const float *pl_cuda_gemv_parts(const pl_cuda_gemv_ws *ws) {
    return ws && ws->ptr ? reinterpret_cast<const float *>(static_cast<const char *>(ws->ptr) + cnt_bytes(ws->sms)) : nullptr;
}

extern "C" int pl_cuda_gemv_bf16(const void *w, const void *x, int m, int n, int k, void *y, int y_f32, int variant,
                                 const pl_cuda_gemv_ws *ws, void *stream) {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const __nv_bfloat16 *W = static_cast<const __nv_bfloat16 *>(w), *X = static_cast<const __nv_bfloat16 *>(x);
    if (variant == PL_CUDA_GEMV_TILE)
        return (int)(y_f32 ? launch_tile(W, X, m, n, k, static_cast<float *>(y), ws, s)
                           : launch_tile(W, X, m, n, k, static_cast<__nv_bfloat16 *>(y), ws, s));
    if (m > PL_CUDA_GEMV_MAX_M) return (int)cudaErrorInvalidValue;
    const cudaError_t e =
        variant == PL_CUDA_GEMV_FMA
            ? (y_f32 ? launch(W, X, m, n, k, static_cast<float *>(y), ws, s)
                     : launch(W, X, m, n, k, static_cast<__nv_bfloat16 *>(y), ws, s))
            : (y_f32 ? launch_mma(W, X, m, n, k, static_cast<float *>(y), ws, s)
                     : launch_mma(W, X, m, n, k, static_cast<__nv_bfloat16 *>(y), ws, s));
    return (int)e;
}
