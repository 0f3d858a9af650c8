/* Diagnostic build only (-DPL_DIAG_STAMPS): every instrumented kernel's CTAs stamp
 * %globaltimer at entry, after the PDL wait, at a kernel-chosen point (the tile GEMM: first
 * stage landed) and at exit (the last warp to leave), with the SM, into one device buffer:
 * a step's timeline, CTA by CTA. Without the macro every piece is empty and compiles away.
 * Buffer: word 0 the record count, word 1 the capacity in records, records of 8 words from
 * word 8: {kind << 56 | a << 28 | b, blockIdx.x | blockIdx.y << 32, smid, entry, wait, mark,
 * exit, c}. Kinds: 1 tile GEMM (a N, b K, c M | splits << 16 | NP << 24 | TMA << 32; mark: first
 * stage landed), 2 decode attention (MMA), 3 split merge, 4 add + RMSNorm (bf16x8), 5 SwiGLU,
 * 7 embed, 8 argmax finish, 9 RMSNorm, 10 add + RMSNorm (generic), 11 add + RMSNorm of GEMM
 * partials (mark: partials added), 12 fused MLP (a hidden, b intermediate, c rows | splits << 16
 * | weight slots << 24; mark: h stored and counted), or one projection by the same kernel (wide or
 * full-K: a n, b k, and bit 32 of c set). Each translation unit has its own pointer (static, a
 * diagnostic build's only global state), set by its setter (pl_diag_set_*). Read with
 * bench/cuda/diag_timeline.py. */
#pragma once
#include <stdint.h>

#ifdef PL_DIAG_STAMPS
static __device__ unsigned long long *g_pl_diag;

__device__ __forceinline__ unsigned long long diag_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* the CTA's record while it runs: 8 words as stored, then the exited-warp count */
__device__ __forceinline__ unsigned long long *diag_sh() {
    __shared__ unsigned long long s[9];
    return s;
}
/* The slot's atomic goes out at entry and its result is read only at exit, so no CTA waits
 * on it; the last warp to leave stamps the exit and stores the record (no wait either). */
struct diag_scope {
    unsigned long long idx; /* thread 0: the record's slot */
    __device__ diag_scope(unsigned kind, unsigned a, unsigned b, unsigned long long c) {
        const unsigned long long t = diag_now();
        unsigned long long *s = diag_sh();
        idx = ~0ull;
        if (threadIdx.x == 0) {
            if (g_pl_diag) idx = atomicAdd(g_pl_diag, 1ull);
            unsigned smid;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            s[0] = (unsigned long long)kind << 56 | (unsigned long long)(a & 0xfffffffu) << 28 | (b & 0xfffffffu);
            s[1] = blockIdx.x | (unsigned long long)blockIdx.y << 32;
            s[2] = smid, s[3] = t, s[4] = 0, s[5] = 0, s[6] = ~0ull, s[7] = c, s[8] = 0;
        }
        __syncthreads();
    }
    __device__ void mark(int f) const {
        if (threadIdx.x == 0) diag_sh()[f] = diag_now();
    }
    __device__ ~diag_scope() {
        if ((threadIdx.x & 31) == 0) {
            unsigned long long *s = diag_sh();
            if (threadIdx.x == 0) s[6] = idx;
            __threadfence_block();
            const unsigned long long n = atomicAdd(s + 8, 1ull);
            if (n == (blockDim.x + 31) / 32 - 1) {
                const unsigned long long t = diag_now();
                __threadfence_block();
                const unsigned long long i = *(volatile unsigned long long *)(s + 6);
                if (g_pl_diag && i < g_pl_diag[1]) {
                    unsigned long long *r = g_pl_diag + 8 + i * 8;
                    for (int k = 0; k < 6; ++k) r[k] = s[k];
                    r[6] = t, r[7] = s[7];
                }
            }
        }
    }
};
#define PL_DIAG_SCOPE(kind, a, b, c) const diag_scope pl_ds_((kind), (a), (b), (c))
#define PL_DIAG_MARK(f) pl_ds_.mark(f)
#define PL_DIAG_SETTER(name)                                                                                                 \
    extern "C" int name(void *p) { return (int)cudaMemcpyToSymbol(g_pl_diag, &p, sizeof p); }
#else
#define PL_DIAG_SCOPE(kind, a, b, c) ((void)0)
#define PL_DIAG_MARK(f) ((void)0)
#define PL_DIAG_SETTER(name)
#endif
