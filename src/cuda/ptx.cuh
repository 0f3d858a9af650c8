/* PTX wrappers shared by the CUDA kernels: cp.async staging, ldmatrix, bf16 m16n8k16 MMA,
 * Hopper wgmma (sm_90a), bf16 packing, exp2, mbarriers and TMA tensor copies, programmatic dependent launch;
 * and greedy sampling's argmax key. */
#ifndef PL_CUDA_PTX_CUH
#define PL_CUDA_PTX_CUH

#include <cuda_runtime.h>
#include <stdint.h>

namespace {

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Byte offset of 16-byte chunk ch of row r in a swizzled [rows][128] bf16 tile (256-byte
 * rows; XOR with the row's low bits spreads ldmatrix reads over all banks). */
__device__ __forceinline__ uint32_t swz(int r, int ch) { return (uint32_t)(r * 256 + ((ch ^ (r & 7)) << 4)); }

/* 16 bytes global -> shared; src_bytes < 16 zero-fills the rest (0 = all zeros). */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
/* The same with an L2 cache policy (l2_evict_first below) for data read once. (ptxas 13.0
 * miscompiled it in two trial shapes of the tile GEMM, emitting LDGSTS with a policy register
 * never written: an illegal instruction at run time, which test_cuda_backend catches; PERF.md,
 * seventeenth session.) */
__device__ __forceinline__ void cp_async16_hint(uint32_t dst, const void *src, int src_bytes, uint64_t policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src), "r"(src_bytes), "l"(policy));
}
/* L2 policy: evict these lines first, so a stream read once does not push out what others reuse */
__device__ __forceinline__ uint64_t l2_evict_first() {
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
    return p;
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* two floats -> packed bf16x2 (round to nearest even), low half = first */
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Greedy sampling's order as one 64-bit key (larger wins): the value's bits made monotone,
 * then the lower id; -0.0 counts as 0.0 (as the host comparison), NaN gives 0 (never chosen
 * over a number; all NaN: id 0, as pl_argmax). Shared by the argmax kernel and the tile
 * GEMM's greedy epilogue, so both choose the same id. */
__device__ __forceinline__ unsigned long long argmax_key(float x, int id) {
    if (isnan(x)) return 0ull;
    const uint32_t u = __float_as_uint(x == 0.f ? 0.f : x);
    const uint32_t key = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ((unsigned long long)key << 32) | (0xffffffffu - (uint32_t)id);
}

/* generic-proxy writes to shared memory (stores, cp.async) ordered before the async proxy's
 * accesses to it (wgmma reads, TMA writes) */
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* ---- Hopper warpgroup MMA (sm_90a only: the compute_90 PTX target takes the mma.sync path) ----
 * Operands in shared memory as K-major tiles of 128-byte rows in the 128-byte swizzle
 * (16-byte chunk ch of row r at r * 128 + ((ch ^ (r & 7)) << 4), tile base 1024-aligned): the
 * layout ldmatrix reads above, so the same cp.async staging feeds both. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PL_HAVE_WGMMA 1
/* descriptor: start address, leading offset 16 (unused when swizzled), 1024 bytes between
 * 8-row groups, 128-byte swizzle; +2 per 32 bytes (16 k) along a row */
__device__ __forceinline__ uint64_t wgmma_desc_sw128(uint32_t saddr) {
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
/* keeps the compiler from touching accumulators across the asynchronous MMA */
template <int R> __device__ __forceinline__ void wgmma_fence_operands(float (&c)[R][4]) {
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) asm volatile("" : "+f"(c[i][j])::"memory");
}
/* D[64 x N] += A[64 x 16] B[N x 16]^T, f32 accumulators in the m16n8 C-fragment order per
 * warp (warp w of the group: rows 16w..16w+15; c[j]: tokens 8j..8j+7) */
template <int N> __device__ __forceinline__ void wgmma_bf16(float (&c)[N / 8][4], uint64_t da, uint64_t db);
template <> __device__ __forceinline__ void wgmma_bf16<16>(float (&c)[2][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<32>(float (&c)[4][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]),
                   "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<48>(float (&c)[6][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23}, %24, %25, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]),
                   "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]),
                   "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<64>(float (&c)[8][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]),
                   "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]),
                   "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]),
                   "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3])
                 : "l"(da), "l"(db));
}
#endif

/* ---- mbarrier + TMA tensor copies (sm_90) ---- */
/* the tensor map (a __grid_constant__ parameter) fetched ahead of its first copy */
__device__ __forceinline__ void tmap_prefetch(const void *tmap) { asm volatile("prefetch.tensormap [%0];\n" ::"l"(tmap) : "memory"); }
__device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* the barriers' init visible to the async proxy (the TMA unit) before any copy names them */
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, unsigned phase) {
    asm volatile("{\n.reg .pred P;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
                 "@!P bra WAIT_%=;\n}\n" ::"r"(bar), "r"(phase) : "memory");
}
/* box (c0, c1) of a 2D tensor map into shared memory, counted on bar */
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void *tmap, int c0, int c1, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
/* the same with an L2 policy */
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void *tmap, int c0, int c1, uint32_t bar, uint64_t policy) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
                 : "memory");
}
/* a plain arrival (a consumer releasing a ring slot) */
__device__ __forceinline__ void mbar_arrive(uint32_t bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory"); }
/* whether the phase of parity `parity` has completed, without waiting (a producer polling several
 * barriers in one loop) */
__device__ __forceinline__ bool mbar_test(uint32_t bar, unsigned parity) {
    uint32_t ok;
    asm volatile("{\n.reg .pred P;\nmbarrier.test_wait.parity.shared::cta.b64 P, [%1], %2;\nselp.u32 %0, 1, 0, P;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok != 0;
}
/* a counter written by other CTAs (a grid-wide step): an acquire load at GPU scope */
__device__ __forceinline__ int ld_acquire(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
/* bytes (a multiple of 16, both addresses 16-byte aligned) global -> shared as one bulk copy, counted on bar */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, int bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
/* the same with an L2 policy */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, int bytes, uint32_t bar, uint64_t policy) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar), "l"(policy)
                 : "memory");
}

/* Programmatic dependent launch (sm_90). trigger: a kernel launched after this one with
 * the PDL attribute may start now. wait: block until the grids this one depends on have
 * finished and their writes are visible (returns at once without the attribute). */
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

/* Launch with programmatic stream serialization when pdl != 0: the kernel may start while
 * the one before it in the stream still runs (its launch latency and ramp-up overlap that
 * kernel's tail). Every kernel launched this way calls pdl_wait before it touches memory
 * an earlier kernel writes or reads; most call pdl_trigger first, so the chain continues.
 * cluster_y > 1 groups every cluster_y CTAs along y into a thread-block cluster. */
template <typename... KArgs, typename... Args>
cudaError_t launch_pdl_cluster(void (*kern)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl,
                               unsigned cluster_y, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (cluster_y > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = 1;
        attr[n].val.clusterDim.y = cluster_y;
        attr[n++].val.clusterDim.z = 1;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, kern, args...);
}
template <typename... KArgs, typename... Args>
cudaError_t launch_pdl(void (*kern)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl, Args... args) {
    return launch_pdl_cluster(kern, grid, block, smem, s, pdl, 1u, args...);
}

} // namespace

#endif
