/* Experiment: where inside one skinny GEMM does the time go that every projection pays over
 * its bytes? (sixth CUDA session: ncu times of a batch-4 step's four projections against their
 * bytes fit ~4.6 TB/s plus ~7 us per kernel). The tile GEMM's main loop (as in
 * exp_weight_stream.cu: 128 weight rows x 64 k per stage, 4-stage cp.async ring, M = 4, 72 KiB
 * per CTA, the backend's per-tile K split, trigger at the top and three weight stages issued
 * before the PDL wait) with each CTA stamping %globaltimer at entry, after the PDL wait, when
 * its first stage has landed, and at exit. For one launch of each projection on cold weights
 * it prints the span from the events and, from the stamps (us after the first CTA's entry):
 * the spread of CTA entries, the time in the PDL wait, the first-stage latency and the
 * quantiles of CTA exits, so a fixed cost shows as late starts, a slow first stage or a long
 * tail of exits. The four projections back to back, without and with PDL, show the gaps
 * between kernels and what early-launched CTAs do. Every case also runs with a dynamic K
 * split (the splits of a tile claim chunks of k steps from a counter; measured slower, PERF.md
 * sixth session).
 *
 * Not part of the build. On a GPU machine:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc bench/cuda/exp_gemm_timeline.cu -o exp_gemm_timeline
 *   ./exp_gemm_timeline
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


/* stamps: per CTA {entry, first stage landed, exit, smid}. ctr == nullptr: CTA split sp of a
 * tile streams k steps [KT * sp / ks, KT * (sp + 1) / ks), as the backend. ctr != nullptr
 * (zeroed): the splits of a tile take chunks of DCH k steps as they go, chunk sp first, then
 * the next free one from the tile's counter (claimed a chunk ahead), so a split that started
 * late streams fewer (partials here are written, not added). */
constexpr int DCH = 4;
__global__ void __launch_bounds__(TW * 32, 2) tile_kernel(const __nv_bfloat16 *__restrict__ W, const __nv_bfloat16 *__restrict__ x,
                                                          int N, int K, int ks, float *__restrict__ out,
                                                          unsigned long long *__restrict__ stamps, int *__restrict__ ctr) {
    const unsigned long long t0 = gtimer();
    pdl_trigger(); /* as the backend: the next GEMM may launch now (a no-op without PDL) */
    extern __shared__ __align__(128) unsigned char tsm[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int KT = K / TBK;
    const int t = blockIdx.x / ks, sp = blockIdx.x % ks;
    const int k0 = KT * sp / ks, n = KT * (sp + 1) / ks - k0;
    const uint32_t sb = smem_u32(tsm);
    /* dynamic: position j of this CTA's stream is k step chunk[j / DCH % 2] * DCH + j % DCH */
    __shared__ int chunk[2];
    int pend = 0; /* thread 0: the claim for the chunk after next */
    if (ctr && tid == 0) {
        chunk[0] = sp;
        chunk[1] = ks + atomicAdd(ctr + t, 1);
        pend = ks + atomicAdd(ctr + t, 1);
    }
    if (ctr) __syncthreads();
    auto kt_of = [&](int j) { return ctr ? chunk[j / DCH % 2] * DCH + j % DCH : k0 + j; };
    auto live = [&](int j) { return ctr ? kt_of(j) < KT : j < n; };
    auto load_w = [&](int st, int kt) {
#pragma unroll
        for (int i = 0; i < T_WBYTES / 16 / (TW * 32); ++i) {
            const int q = tid + i * TW * 32, r = q >> 3, ch = q & 7;
            cp_async16(sb + st * T_STAGE + swz128(r, ch), W + (size_t)(t * TBM + r) * K + kt * TBK + ch * 8, 16);
        }
    };
    auto load_x = [&](int st, int kt) {
        if (tid < 16 * 8) {
            const int r = tid >> 3, ch = tid & 7;
            cp_async16(sb + st * T_STAGE + T_WBYTES + swz128(r, ch), x + (size_t)(r < M ? r : 0) * K + kt * TBK + ch * 8,
                       r < M ? 16 : 0);
        }
    };
    /* weights first (they do not depend on the kernel before), x after the PDL wait */
#pragma unroll
    for (int j = 0; j < TST - 1; ++j)
        if (live(j)) load_w(j, kt_of(j));
    pdl_wait();
    const unsigned long long tw = gtimer();
#pragma unroll
    for (int j = 0; j < TST - 1; ++j) {
        if (live(j)) load_x(j, kt_of(j));
        cp_async_commit();
    }
    float acc[2][4] = {};
    unsigned long long t1 = 0;
    for (int i = 0; live(i); ++i) {
        cp_async_wait<TST - 2>();
        __syncthreads();
        if (i == 0) t1 = gtimer();
        const int j = i + TST - 1; /* TST - 1 < DCH: j's chunk is this one or the next, both known */
        if (live(j)) load_w(j % TST, kt_of(j)), load_x(j % TST, kt_of(j));
        cp_async_commit();
        if (ctr && tid == 0 && i % DCH == DCH - 1) { /* i + 1 starts a chunk: its successor's claim goes in the freed slot */
            chunk[(i / DCH) % 2] = pend;
            pend = ks + atomicAdd(ctr + t, 1);
        }
        const uint32_t wsm = sb + (i % TST) * T_STAGE, xsm = wsm + T_WBYTES;
        stage_mma(wsm, xsm, warp, lane, acc);
    }
    cp_async_wait<0>();
    float *o = out + (size_t)blockIdx.x * TW * 32 * 4;
    *reinterpret_cast<float4 *>(o + tid * 4) = make_float4(acc[0][0] + acc[1][0], acc[0][1] + acc[1][1], acc[0][2], acc[1][3]);
    __syncthreads();
    if (tid == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        stamps[blockIdx.x * 4 + 0] = t0;
        stamps[blockIdx.x * 4 + 1] = t1;
        stamps[blockIdx.x * 4 + 2] = gtimer();
        stamps[blockIdx.x * 4 + 3] = (unsigned long long)smid | (tw - t0) << 16; /* SM, and ns spent in the PDL wait */
    }
}

struct shape {
    const char *name;
    int N, K;
};

int splits_of(const shape &sh, int sms) { /* the backend's: ~2 CTAs per SM, >= 4 k steps, <= 16 */
    const int tiles = sh.N / TBM, KT = sh.K / TBK;
    int ks = 2 * sms / tiles;
    if (ks > KT / 4) ks = KT / 4;
    if (ks > 16) ks = 16;
    return ks < 1 ? 1 : ks;
}

double q(std::vector<double> v, double f) {
    std::sort(v.begin(), v.end());
    return v[(size_t)(f * (v.size() - 1))];
}

/* prints the stamps of ctas CTAs relative to base (ns) */
void report(const char *name, const unsigned long long *h, int ctas, unsigned long long base, double wbytes) {
    std::vector<double> ent, first, ex, lat, wt;
    unsigned long long emax = 0;
    for (int c = 0; c < ctas; c++) {
        ent.push_back((double)(h[c * 4] - base));
        first.push_back((double)(h[c * 4 + 1] - base));
        ex.push_back((double)(h[c * 4 + 2] - base));
        lat.push_back((double)(h[c * 4 + 1] - h[c * 4]));
        wt.push_back((double)(h[c * 4 + 3] >> 16));
        emax = std::max(emax, h[c * 4 + 2]);
    }
    std::vector<int> per_sm(1024, 0); /* CTAs per SM (placement) */
    for (int c = 0; c < ctas; c++) per_sm[h[c * 4 + 3] & 1023]++;
    int used = 0, most = 0;
    for (int n : per_sm) used += n > 0, most = std::max(most, n);
    const double span = (double)(emax - base) * 1e-3;
    std::vector<double> all(ent);
    all.insert(all.end(), ex.begin(), ex.end());
    std::sort(all.begin(), all.end());
    double step = 1e30; /* smallest nonzero step between stamps: the timer's resolution, about */
    for (size_t i = 1; i < all.size(); i++)
        if (all[i] > all[i - 1]) step = std::min(step, all[i] - all[i - 1]);
    printf("%-8s %4d CTAs  entry min/med/max %6.2f %6.2f %6.2f us | PDL wait med/max %5.2f %5.2f | first stage after entry med/max %5.2f %5.2f | "
           "exit q0/q10/q50/q90/max %6.2f %6.2f %6.2f %6.2f %6.2f | span %6.2f us = %5.0f GB/s | step %.0f ns | %d SMs, <= %d CTAs each\n",
           name, ctas, q(ent, 0) * 1e-3, q(ent, .5) * 1e-3, q(ent, 1) * 1e-3, q(wt, .5) * 1e-3, q(wt, 1) * 1e-3, q(lat, .5) * 1e-3, q(lat, 1) * 1e-3,
           q(ex, 0) * 1e-3, q(ex, .1) * 1e-3, q(ex, .5) * 1e-3, q(ex, .9) * 1e-3, q(ex, 1) * 1e-3, span, wbytes / (span * 1e-6) / 1e9, step, used, most);
}

} // namespace

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaFuncSetAttribute(tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM));
    const shape shapes[] = {{"qkv", 6144, 2560}, {"o", 2560, 4096}, {"gate_up", 19456, 2560}, {"down", 2560, 9728}};
    const size_t pool_bytes = (size_t)1 << 30;
    char *pool = nullptr;
    CK(cudaMalloc(&pool, pool_bytes));
    fill<<<sms * 8, 256>>>(reinterpret_cast<uint32_t *>(pool), pool_bytes / 4, 3);
    __nv_bfloat16 *x = nullptr;
    float *out = nullptr;
    unsigned long long *st = nullptr;
    const int max_ctas = 4 * 1024;
    CK(cudaMalloc(&x, (size_t)M * 16384 * 2));
    CK(cudaMemset(x, 0, (size_t)M * 16384 * 2));
    CK(cudaMalloc(&out, (size_t)max_ctas * TW * 32 * 4 * 4));
    CK(cudaMalloc(&st, (size_t)4 * max_ctas * 4 * sizeof(unsigned long long)));
    int *ctr = nullptr; /* dynamic split: a counter per tile, per GEMM of the chain */
    const size_t ctr_bytes = (size_t)4 * 1024 * sizeof(int);
    CK(cudaMalloc(&ctr, ctr_bytes));
    std::vector<unsigned long long> h((size_t)4 * max_ctas * 4);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    size_t off = 0;
    /* each projection alone, cold (a fresh slice of the pool each time), 5 runs: the median span's run */
    printf("one launch per projection, cold weights, stamps in us after the first CTA's entry; static then dynamic split\n");
    for (const shape &sh : shapes) {
        const size_t wb = (size_t)sh.N * sh.K * 2;
        const int ks = splits_of(sh, sms), ctas = sh.N / TBM * ks;
        for (int r = 0; r < 6; r++) {
            const int dyn = r >= 3;
            if (off + wb > pool_bytes) off = 0;
            const __nv_bfloat16 *w = reinterpret_cast<const __nv_bfloat16 *>(pool + off);
            off += wb;
            CK(cudaMemset(ctr, 0, ctr_bytes));
            const float ms = time_runs(0, e0, e1, 1, [&] {
                tile_kernel<<<ctas, TW * 32, T_SMEM>>>(w, x, sh.N, sh.K, ks, out, st, dyn ? ctr : nullptr);
            });
            printf("%s ", dyn ? "dyn" : "sta");
            CK(cudaMemcpy(h.data(), st, (size_t)ctas * 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            unsigned long long base = ~0ull;
            for (int c = 0; c < ctas; c++) base = std::min(base, h[c * 4]);
            printf("[events %6.2f us] ", ms * 1e3);
            report(sh.name, h.data(), ctas, base, (double)wb);
        }
    }
    /* the four back to back, without and with PDL, static and dynamic split, 3 times each */
    for (int r = 0; r < 12; r++) {
        const int pdl = r / 3 % 2, dyn = r >= 6;
        if (r % 3 == 0)
            printf("the four projections back to back (%s, %s split), stamps after the first kernel's first entry\n",
                   pdl ? "PDL, trigger at the top, 3 weight stages issued before the wait" : "no PDL", dyn ? "dynamic" : "static");
        int ctas[4];
        CK(cudaMemset(ctr, 0, ctr_bytes));
        const float ms = time_runs(0, e0, e1, 1, [&] {
            for (int i = 0; i < 4; i++) {
                const shape &sh = shapes[i];
                const size_t wb = (size_t)sh.N * sh.K * 2;
                if (off + wb > pool_bytes) off = 0;
                const int ks = splits_of(sh, sms);
                ctas[i] = sh.N / TBM * ks;
                CK(launch_pdl(tile_kernel, dim3(ctas[i]), dim3(TW * 32), (size_t)T_SMEM, (cudaStream_t)0, pdl && i > 0,
                              reinterpret_cast<const __nv_bfloat16 *>(pool + off), (const __nv_bfloat16 *)x, sh.N, sh.K, ks, out,
                              st + (size_t)i * max_ctas * 4, dyn ? ctr + i * 1024 : (int *)nullptr));
                off += wb;
            }
        });
        CK(cudaMemcpy(h.data(), st, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        unsigned long long base = ~0ull;
        for (int c = 0; c < ctas[0]; c++) base = std::min(base, h[c * 4]);
        double bytes = 0;
        for (int i = 0; i < 4; i++) bytes += (double)shapes[i].N * shapes[i].K * 2;
        printf("chain %d: events %.2f us for %.1f MB = %.0f GB/s\n", r, ms * 1e3, bytes / 1e6, bytes / (ms * 1e-3) / 1e9);
        for (int i = 0; i < 4; i++)
            report(shapes[i].name, h.data() + (size_t)i * max_ctas * 4, ctas[i], base, (double)shapes[i].N * shapes[i].K * 2);
    }
    return 0;
}
