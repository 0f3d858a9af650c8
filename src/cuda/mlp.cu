/* A decode batch's MLP as one kernel on sm_90a (see mlp_cuda.h).
 *
 * Why: at 33-64 rows the tile GEMM (gemv.cu) streams the gate/up and down projections in 97 KiB
 * CTAs that land two per SM on 63-87 of the 132 SMs and keep 6-10 MB of weights in flight, and
 * the SwiGLU kernel between them costs ~6 us with its launch (PERF.md, twenty-eighth session).
 * Here one CTA per SM (a cooperative launch, so all are resident) and one weight ring run
 * through both projections:
 * - Roles swapped against the tile GEMM: A = the 64 token rows of x, B = a weight tile, wgmma
 *   m64nNk16 with N up to 256, so a CTA can own a wide tile over all of K.
 * - Phase 1: CTA c owns intermediate columns [cols c, cols (c + 1)): its gate rows land at tile
 *   rows 0.., its up rows at N1 / 2.. (two TMA boxes of the plain [gate; up] weight), so each
 *   thread holds a column's gate and up sums (N1 / 2 a multiple of 8) and SwiGLU is the
 *   epilogue: no K split, no sums. The tile rows between (N1 / 2 - cols of each half) hold stale
 *   shared memory; their columns are never read.
 * - Phase 2: down as tiles x K splits; each CTA stores its f32 partial plane, and the add +
 *   RMSNorm after the MLP adds the planes (add_rmsnorm_parts_kernel), as it does for the tile
 *   GEMM's split partials.
 * - Between them one count: each CTA's h stores, a fence, an atomic add; the producer loads
 *   down's x once all CTAs are counted. Down's weights go into the ring as soon as slots free,
 *   so the count's wait overlaps their stream.
 * Measured on the H200 (PERF.md, twenty-ninth session): 36 layers of Qwen3-4B's MLP with an o
 * projection before each (bench/cuda/exp_mlp64.cu) 54.9 against 58.3 us a layer at 64 rows; in
 * the step 0.3-1% faster at 60-64 rows, level at 56 and 0.5-1.5% slower at 40-48 (the kernel starts
 * only once the kernels before it have left, and the next layer's qkv GEMM cannot start beside
 * it). h is bitwise the unfused kernels'. Tried and dropped: per-stage flags instead of the count
 * (the producer's polls serialize), down as 80-row tiles x 4 splits, shallower 125 KiB rings,
 * and the add + RMSNorm and the next layer's qkv GEMM inside the kernel (three more grid-wide
 * steps: 2x slower; session29/patches).
 *
 * The same kernel with no phase 1 (N1 = 0, pl_cuda_wide_bf16) runs one projection whose add +
 * RMSNorm follows (the o projection at 57-64 rows) as tiles x K splits on one CTA per SM, in a
 * plain launch since no CTA waits for another: o took 5.2-5.8 us a layer at batch 64 against
 * 9.6-10.3 for the tile GEMM's 120 CTAs on ~72 SMs, and the step 1.1-2.5% less (PERF.md,
 * thirtieth session). The qkv projection so (its partials summed by a kernel, or by the decode
 * attention as it reads q, k and v) and the K splits added through distributed shared memory in
 * clusters were level or slower: the attention's CTAs cannot enter beside 124-168 KiB CTAs, and
 * a cluster's two steps cost ~3 us (session30/patches).
 *
 * With no phase 2 (N2 = 0, pl_cuda_fullk_bf16) it runs one projection over all of K, no sums: the
 * qkv projection so, in a ring that fits beside one attention CTA, took Qwen3-4B's batch-64 step
 * 1.3-1.6% down and Qwen3-8B's 1.2-1.8% up (PERF.md, thirty-second session): an opt-in. The qkv
 * projection as the wide kernel adding its own splits (each tile's last split adds the planes into
 * bf16 y) was level in a 105 KiB ring (which streams no faster than the tile GEMM) and 3.5% slower
 * in the 168 KiB one (thirty-fourth session, session34/patches). Beside the 105 KiB CTAs the
 * attention's entered only at 128 registers or fewer: this kernel's fifth warp shares an SM
 * sub-partition (16384 registers) with another, and an attention warp takes 7424. */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda/mlp_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/tma_cuda.h"
#include "cuda/diag_stamps.cuh"
#include "cuda/elem.cuh"

namespace {

#ifdef PL_HAVE_WGMMA
/* the widths ptx.cuh lacks */
template <> __device__ __forceinline__ void wgmma_bf16<96>(float (&c)[12][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47}, %48, %49, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<128>(float (&c)[16][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<160>(float (&c)[20][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79}, %80, %81, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3]), "+f"(c[16][0]), "+f"(c[16][1]), "+f"(c[16][2]), "+f"(c[16][3]), "+f"(c[17][0]), "+f"(c[17][1]), "+f"(c[17][2]), "+f"(c[17][3]), "+f"(c[18][0]), "+f"(c[18][1]), "+f"(c[18][2]), "+f"(c[18][3]), "+f"(c[19][0]), "+f"(c[19][1]), "+f"(c[19][2]), "+f"(c[19][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<192>(float (&c)[24][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}, %96, %97, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3]), "+f"(c[16][0]), "+f"(c[16][1]), "+f"(c[16][2]), "+f"(c[16][3]), "+f"(c[17][0]), "+f"(c[17][1]), "+f"(c[17][2]), "+f"(c[17][3]), "+f"(c[18][0]), "+f"(c[18][1]), "+f"(c[18][2]), "+f"(c[18][3]), "+f"(c[19][0]), "+f"(c[19][1]), "+f"(c[19][2]), "+f"(c[19][3]), "+f"(c[20][0]), "+f"(c[20][1]), "+f"(c[20][2]), "+f"(c[20][3]), "+f"(c[21][0]), "+f"(c[21][1]), "+f"(c[21][2]), "+f"(c[21][3]), "+f"(c[22][0]), "+f"(c[22][1]), "+f"(c[22][2]), "+f"(c[22][3]), "+f"(c[23][0]), "+f"(c[23][1]), "+f"(c[23][2]), "+f"(c[23][3])
                 : "l"(da), "l"(db));
}
template <> __device__ __forceinline__ void wgmma_bf16<256>(float (&c)[32][4], uint64_t da, uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, 1, 1, 1, 0, 0;\n"
                 : "+f"(c[0][0]), "+f"(c[0][1]), "+f"(c[0][2]), "+f"(c[0][3]), "+f"(c[1][0]), "+f"(c[1][1]), "+f"(c[1][2]), "+f"(c[1][3]), "+f"(c[2][0]), "+f"(c[2][1]), "+f"(c[2][2]), "+f"(c[2][3]), "+f"(c[3][0]), "+f"(c[3][1]), "+f"(c[3][2]), "+f"(c[3][3]), "+f"(c[4][0]), "+f"(c[4][1]), "+f"(c[4][2]), "+f"(c[4][3]), "+f"(c[5][0]), "+f"(c[5][1]), "+f"(c[5][2]), "+f"(c[5][3]), "+f"(c[6][0]), "+f"(c[6][1]), "+f"(c[6][2]), "+f"(c[6][3]), "+f"(c[7][0]), "+f"(c[7][1]), "+f"(c[7][2]), "+f"(c[7][3]), "+f"(c[8][0]), "+f"(c[8][1]), "+f"(c[8][2]), "+f"(c[8][3]), "+f"(c[9][0]), "+f"(c[9][1]), "+f"(c[9][2]), "+f"(c[9][3]), "+f"(c[10][0]), "+f"(c[10][1]), "+f"(c[10][2]), "+f"(c[10][3]), "+f"(c[11][0]), "+f"(c[11][1]), "+f"(c[11][2]), "+f"(c[11][3]), "+f"(c[12][0]), "+f"(c[12][1]), "+f"(c[12][2]), "+f"(c[12][3]), "+f"(c[13][0]), "+f"(c[13][1]), "+f"(c[13][2]), "+f"(c[13][3]), "+f"(c[14][0]), "+f"(c[14][1]), "+f"(c[14][2]), "+f"(c[14][3]), "+f"(c[15][0]), "+f"(c[15][1]), "+f"(c[15][2]), "+f"(c[15][3]), "+f"(c[16][0]), "+f"(c[16][1]), "+f"(c[16][2]), "+f"(c[16][3]), "+f"(c[17][0]), "+f"(c[17][1]), "+f"(c[17][2]), "+f"(c[17][3]), "+f"(c[18][0]), "+f"(c[18][1]), "+f"(c[18][2]), "+f"(c[18][3]), "+f"(c[19][0]), "+f"(c[19][1]), "+f"(c[19][2]), "+f"(c[19][3]), "+f"(c[20][0]), "+f"(c[20][1]), "+f"(c[20][2]), "+f"(c[20][3]), "+f"(c[21][0]), "+f"(c[21][1]), "+f"(c[21][2]), "+f"(c[21][3]), "+f"(c[22][0]), "+f"(c[22][1]), "+f"(c[22][2]), "+f"(c[22][3]), "+f"(c[23][0]), "+f"(c[23][1]), "+f"(c[23][2]), "+f"(c[23][3]), "+f"(c[24][0]), "+f"(c[24][1]), "+f"(c[24][2]), "+f"(c[24][3]), "+f"(c[25][0]), "+f"(c[25][1]), "+f"(c[25][2]), "+f"(c[25][3]), "+f"(c[26][0]), "+f"(c[26][1]), "+f"(c[26][2]), "+f"(c[26][3]), "+f"(c[27][0]), "+f"(c[27][1]), "+f"(c[27][2]), "+f"(c[27][3]), "+f"(c[28][0]), "+f"(c[28][1]), "+f"(c[28][2]), "+f"(c[28][3]), "+f"(c[29][0]), "+f"(c[29][1]), "+f"(c[29][2]), "+f"(c[29][3]), "+f"(c[30][0]), "+f"(c[30][1]), "+f"(c[30][2]), "+f"(c[30][3]), "+f"(c[31][0]), "+f"(c[31][1]), "+f"(c[31][2]), "+f"(c[31][3])
                 : "l"(da), "l"(db));
}
#endif

constexpr int MR = PL_CUDA_MLP_ROWS, XSLOT = MR * 128, NTH = 128 + 32; /* one consumer warpgroup, one producer warp */

struct mlp_params {
    __nv_bfloat16 *h;
    float *part;
    int *cnt;
    int hidden, inter, cols, tiles, tile, splits, kt1, kt2, ktd, rows;
    int coop; /* a cooperative launch: every CTA resident, so no poll needs a time limit */
    int pre;  /* weight stages issued before the PDL wait (pl_cuda_mlp_plan.pre; 0: the default) */
};

#ifdef PL_HAVE_WGMMA /* the kernel's helpers (its body is empty in the compute_90 PTX) */
/* the counters, each on its own 128-byte line: h stored (reaches the CTA count), CTAs out */
constexpr int CNT_LINE = 32;
__device__ __forceinline__ unsigned long long gtimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* the SwiGLU kernel's value for the f32 gate/up sums, rounded to bf16 as the gate/up GEMM stores them */
__device__ __forceinline__ __nv_bfloat16 swiglu1(float g, float u) {
    return swiglu_act<__nv_bfloat16>(round_act<__nv_bfloat16>(g), round_act<__nv_bfloat16>(u));
}
/* a grid-wide step: once the consumers' stores are issued, one thread makes them visible and
 * counts the CTA on the step's counter */
__device__ __forceinline__ void grid_count(int *cnt) {
    asm volatile("bar.sync 1, 128;\n" ::: "memory");
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(cnt, 1);
    }
}
#endif

/* N1: phase 1's tile width (2 x a multiple of 8 >= cols), N2: down's tile rows; S weight slots
 * of max(N1, N2) rows, XS x slots of 64 rows, 64 k each. N1 = 0: no phase 1 and no count, phase 2
 * alone on x (tx2; tw1 and tx1 unused): one projection's K-split partials (pl_cuda_wide_bf16).
 * N2 = 0: phase 1 alone as one projection over all of K (pl_cuda_fullk_bf16): CTA c owns output
 * columns [c N1, (c + 1) N1) (one box of tw1), stores them as bf16 into h (row stride inter), no
 * count, no sums. */
template <int N1, int N2, int S, int XS>
__global__ void __launch_bounds__(NTH, 1)
    mlp_kernel(const __grid_constant__ CUtensorMap tw1, const __grid_constant__ CUtensorMap tx1, const __grid_constant__ CUtensorMap tw2,
               const __grid_constant__ CUtensorMap tx2, const mlp_params a) {
#ifdef PL_HAVE_WGMMA
    constexpr int WSLOT = (N1 > N2 ? N1 : N2) * 128;
    pdl_trigger();
    /* one projection (wide or full-K) records its (n, k) and a flag, as diag_timeline.py reads them */
    PL_DIAG_SCOPE(12, N2 == 0 ? a.inter : a.hidden, N2 == 0 ? a.hidden : a.inter,
                  (unsigned long long)a.rows | (unsigned long long)a.splits << 16 | (unsigned long long)S << 24 |
                      (unsigned long long)(N1 == 0 || N2 == 0) << 32);
    extern __shared__ __align__(128) unsigned char sm[];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, c = blockIdx.x, C = gridDim.x;
    const uint32_t sb = (smem_u32(sm) + 1023u) & ~1023u, xb = sb + S * WSLOT;
    const uint32_t full = xb + XS * XSLOT, empty = full + S * 8, xfull = empty + S * 8, xempty = xfull + XS * 8;
    /* phase 2: tile nt, K split sp (stages q2 ..), n2 stages; CTAs past tiles x splits have none */
    const int nt = N2 ? c / a.splits : 0, sp = N2 ? c % a.splits : 0, q2 = sp * a.kt2;
    const int n2 = N2 && c < a.tiles * a.splits ? min(a.kt2, a.ktd - q2) : 0, NQ = a.kt1 + n2;
    if (tid == 0) {
        for (int j = 0; j < S; ++j) mbar_init(full + j * 8, 1), mbar_init(empty + j * 8, 128);
        for (int j = 0; j < XS; ++j) mbar_init(xfull + j * 8, 1), mbar_init(xempty + j * 8, 128);
        mbar_init_fence();
    }
    __syncthreads();
    if (warp == 4) { /* the producer: one lane, weights as soon as a slot frees, x once it may */
        if (lane != 0) return;
        const uint64_t wpol = l2_evict_first(); /* read once a step, as the tile GEMM's */
        auto issue_w = [&](int q) {
            const uint32_t slot = sb + (q % S) * WSLOT, bar = full + (q % S) * 8;
            if (N2 == 0) { /* one box of N1 rows; rows past inter read as zero, counted all the same */
                mbar_expect_tx(bar, N1 * 128u);
                tma_load_2d(slot, &tw1, q * 64, c * N1, bar, wpol);
            } else if (q < a.kt1) {
                mbar_expect_tx(bar, 2u * a.cols * 128u);
                tma_load_2d(slot, &tw1, q * 64, c * a.cols, bar, wpol);
                tma_load_2d(slot + N1 / 2 * 128, &tw1, q * 64, a.inter + c * a.cols, bar, wpol);
            } else {
                mbar_expect_tx(bar, N2 * 128u); /* rows past hidden read as zero, counted all the same */
                tma_load_2d(slot, &tw2, (q2 + q - a.kt1) * 64, nt * a.tile, bar, wpol);
            }
        };
        int nw = 0, nx = 0;
        /* the weights depend on no kernel before: the first go out before the wait. The MLP
         * sends a third of its ring (2 of 6 stages at Qwen3-4B's width): the add + RMSNorm
         * before it reads its 5.2 MB of partials as these CTAs enter, and a whole ring (16 MB
         * over 128 CTAs) queued ahead of those reads slowed the norm more than the head start
         * gained (PERF.md, thirty-first session: the batch-64 step 0.3-1% faster). A full-K
         * projection, entering beside the norm before it, sends a third too. A wide projection
         * enters during the attention's tail: its whole ring. */
        const int pre = a.pre > 0 ? (a.pre < S ? a.pre : S) : N1 > 0 ? (S / 3 > 1 ? S / 3 : 1) : S;
        for (; nw < pre && nw < NQ; ++nw) issue_w(nw);
        pdl_wait();
        bool ready = N1 == 0; /* a wide projection's x needs no count */
        unsigned polls = 0;
        const unsigned long long t0 = gtimer();
        while (nx < NQ) {
            if (nw < NQ && mbar_test(empty + (nw % S) * 8, (unsigned)((nw / S - 1) & 1))) issue_w(nw++);
            if (nx < XS || mbar_test(xempty + (nx % XS) * 8, (unsigned)((nx / XS - 1) & 1))) {
                if (nx >= a.kt1 && !ready) { /* down's x once every CTA counted its h */
                    if (ld_acquire(a.cnt) >= C) {
                        ready = true;
                        asm volatile("fence.proxy.async.global;\n" ::: "memory"); /* the stores seen, before the TMA reads */
                    } else {
                        __nanosleep(64); /* 128 pollers of one line would slow the adds they wait for */
                        if (!a.coop && (++polls & 1023u) == 0 && gtimer() - t0 > 2000000000ull)
                            __trap(); /* CTAs never all resident (a launch without the cooperative guarantee): fail, do not hang */
                    }
                }
                if (nx < a.kt1 || ready) {
                    const uint32_t bar = xfull + (nx % XS) * 8, dst = xb + (nx % XS) * XSLOT;
                    mbar_expect_tx(bar, XSLOT);
                    if (nx < a.kt1) tma_load_2d(dst, &tx1, nx * 64, 0, bar);
                    else tma_load_2d(dst, &tx2, (q2 + nx - a.kt1) * 64, 0, bar);
                    ++nx;
                }
            }
        }
        while (nw < NQ)
            if (mbar_test(empty + (nw % S) * 8, (unsigned)((nw / S - 1) & 1))) issue_w(nw++);
        return;
    }
    pdl_wait();
    PL_DIAG_MARK(4);
    const int g8 = lane >> 2, t4 = lane & 3, tok0 = warp * 16 + g8, tok1 = tok0 + 8;
    auto consume = [&](int q, auto &acc) {
        mbar_wait(full + (q % S) * 8, (unsigned)((q / S) & 1));
        mbar_wait(xfull + (q % XS) * 8, (unsigned)((q / XS) & 1));
        const uint64_t da = wgmma_desc_sw128(xb + (q % XS) * XSLOT), db = wgmma_desc_sw128(sb + (q % S) * WSLOT);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_bf16<(int)(sizeof(acc) / 16 * 8)>(acc, da + 2 * kk, db + 2 * kk);
        wgmma_commit();
        wgmma_wait<0>();
        wgmma_fence_operands(acc);
        mbar_arrive(empty + (q % S) * 8);
        mbar_arrive(xempty + (q % XS) * 8);
    };
    if constexpr (N1 > 0) {
        float acc[N1 / 8][4];
#pragma unroll
        for (int j = 0; j < N1 / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = 0; q < a.kt1; ++q) consume(q, acc);
        if constexpr (N2 == 0) { /* a full-K projection: its columns as bf16, rounded once from the f32 sums */
#pragma unroll
            for (int j = 0; j < N1 / 8; ++j) {
                const int i = c * N1 + 8 * j + 2 * t4;
                if (i < a.inter) {
                    if (tok0 < a.rows)
                        *reinterpret_cast<__nv_bfloat162 *>(a.h + (size_t)tok0 * a.inter + i) = __floats2bfloat162_rn(acc[j][0], acc[j][1]);
                    if (tok1 < a.rows)
                        *reinterpret_cast<__nv_bfloat162 *>(a.h + (size_t)tok1 * a.inter + i) = __floats2bfloat162_rn(acc[j][2], acc[j][3]);
                }
            }
        } else {
            /* column col < cols: gate at acc[j], its up N1 / 2 columns on, acc[j + N1 / 16] */
#pragma unroll
            for (int j = 0; j < N1 / 16; ++j) {
                const int col = 8 * j + 2 * t4, i = c * a.cols + col;
                if (col < a.cols) {
                    if (tok0 < a.rows)
                        *reinterpret_cast<__nv_bfloat162 *>(a.h + (size_t)tok0 * a.inter + i) =
                            __halves2bfloat162(swiglu1(acc[j][0], acc[j + N1 / 16][0]), swiglu1(acc[j][1], acc[j + N1 / 16][1]));
                    if (tok1 < a.rows)
                        *reinterpret_cast<__nv_bfloat162 *>(a.h + (size_t)tok1 * a.inter + i) =
                            __halves2bfloat162(swiglu1(acc[j][2], acc[j + N1 / 16][2]), swiglu1(acc[j][3], acc[j + N1 / 16][3]));
                }
            }
            grid_count(a.cnt); /* h */
        }
    }
    PL_DIAG_MARK(5);
    if constexpr (N2 > 0) if (n2 > 0) {
        float acc[N2 / 8][4];
#pragma unroll
        for (int j = 0; j < N2 / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        for (int q = a.kt1; q < NQ; ++q) consume(q, acc);
        const int n0 = nt * a.tile + 2 * t4;
        float *p0 = a.part + ((size_t)sp * a.rows + tok0) * a.hidden + n0, *p1 = p0 + (size_t)8 * a.hidden;
#pragma unroll
        for (int j = 0; j < N2 / 8; ++j)
            if (n0 + 8 * j < a.hidden) {
                if (tok0 < a.rows) *reinterpret_cast<float2 *>(p0 + 8 * j) = make_float2(acc[j][0], acc[j][1]);
                if (tok1 < a.rows) *reinterpret_cast<float2 *>(p1 + 8 * j) = make_float2(acc[j][2], acc[j][3]);
            }
    }
    if constexpr (N1 > 0 && N2 > 0) {
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
        /* the last CTA out zeroes the counters for the next launch: every producer is past its poll */
        if (tid == 0) __threadfence(); /* this CTA's count read before the reset below may land */
        if (tid == 0 && atomicAdd(a.cnt + CNT_LINE, 1) == C - 1) {
            a.cnt[0] = 0;
            a.cnt[CNT_LINE] = 0;
            __threadfence();
        }
    }
#endif
}

/* 8 columns of one row per thread: the planes in split order, then a +0 when splits is not a
 * multiple of 8, as add_rmsnorm_parts_kernel adds them (the same f32 sums, so the same bf16) */
__global__ void mlp_sum_kernel(const float *__restrict__ parts, int splits, int n8, size_t plane, __nv_bfloat16 *__restrict__ y) {
    pdl_trigger();
    pdl_wait();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n8) return;
    float a[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int r = 0; r <= splits; ++r) {
        if (r == splits && splits % 8 == 0) break;
        float4 q0 = make_float4(0.f, 0.f, 0.f, 0.f), q1 = q0;
        if (r < splits) {
            q0 = __ldcg(reinterpret_cast<const float4 *>(parts + r * plane) + 2 * i);
            q1 = __ldcg(reinterpret_cast<const float4 *>(parts + r * plane) + 2 * i + 1);
        }
        a[0] += q0.x, a[1] += q0.y, a[2] += q0.z, a[3] += q0.w, a[4] += q1.x, a[5] += q1.y, a[6] += q1.z, a[7] += q1.w;
    }
    __nv_bfloat162 o[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) o[k] = __floats2bfloat162_rn(a[2 * k], a[2 * k + 1]);
    reinterpret_cast<uint4 *>(y)[i] = *reinterpret_cast<const uint4 *>(o);
}

__global__ void mlp_probe(int *out) {
#ifdef PL_HAVE_WGMMA
    *out = 1;
#else
    *out = 0;
#endif
}

/* The compiled forms: phase-1 width, down's tile rows, ring depths (each under 227 KiB). */
struct mlp_form {
    int n1, n2, s, xs;
};
constexpr mlp_form kForms[] = {{48, 64, 12, 6}, {96, 128, 8, 6}, {160, 160, 6, 6}, {192, 256, 6, 4}};
constexpr int kNumForms = (int)(sizeof kForms / sizeof kForms[0]);

size_t form_smem(const mlp_form &f) {
    return (size_t)f.s * (f.n1 > f.n2 ? f.n1 : f.n2) * 128 + (size_t)f.xs * XSLOT + 2 * (size_t)(f.s + f.xs) * 8 + 1024;
}

/* a wide projection's form (n1 = 0): 168 KiB, one CTA per SM (a 124 KiB ring, 5 + 3 slots, which
 * fits beside one decode-attention CTA, was level to 1.6% slower in the batch-64 step) */
constexpr mlp_form kWide = {0, 160, 6, 6};

template <int N1, int N2, int S, int XS>
cudaError_t launch_kernel(const pl_cuda_mlp_plan *p, const CUtensorMap *maps, const mlp_params &a, int pdl, cudaStream_t s) {
    auto kern = mlp_kernel<N1, N2, S, XS>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p->smem);
    if (e != cudaSuccess) return e;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    cfg.gridDim = dim3((unsigned)p->ctas);
    cfg.blockDim = dim3(NTH);
    cfg.dynamicSmemBytes = p->smem;
    cfg.stream = s;
    if (p->coop) { /* the count needs every CTA resident */
        attr[n].id = cudaLaunchAttributeCooperative;
        attr[n++].val.cooperative = 1;
    }
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    cfg.attrs = attr;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, kern, maps[0], maps[1], maps[2], maps[3], a);
}
template <int F> cudaError_t launch_form(const pl_cuda_mlp_plan *p, const CUtensorMap *maps, const mlp_params &a, int pdl, cudaStream_t s) {
    constexpr mlp_form f = kForms[F];
    return launch_kernel<f.n1, f.n2, f.s, f.xs>(p, maps, a, pdl, s);
}


/* a full-K projection's forms (n2 = 0) by ring: 0, tile widths 32, 48 and 64 with a ring that fits
 * beside one decode-attention CTA (~113 KiB); 1, deeper ones (~153 KiB). Every CTA reads all of x
 * from L2, a stage's 8 KiB beside 4-8 KiB of weights, so the x ring must be deep too: 4 x slots held
 * the qkv projection at ~20 GB/s a CTA; by an estimate from the stamps a weight stage takes ~2.5 us
 * to land, an x stage ~1.3, and at 48 columns 11 + 6 slots beat 8 + 8, 10 + 7 and 13 + 5 (the last
 * two at 116-118 KiB no longer fit beside the attention; PERF.md, thirty-second session). */
struct fullk_form {
    int ring;
    mlp_form f;
};
constexpr fullk_form kFull[] = {{0, {32, 0, 16, 6}},   {0, {48, 0, 11, 6}},  {0, {64, 0, 9, 5}},
                                {1, {32, 0, 14, 12}}, {1, {48, 0, 12, 10}}, {1, {64, 0, 10, 9}}};
constexpr int kNumFull = (int)(sizeof kFull / sizeof kFull[0]);
template <int F> cudaError_t launch_full(const pl_cuda_mlp_plan *p, const CUtensorMap *maps, const mlp_params &a, int pdl, cudaStream_t s) {
    constexpr mlp_form f = kFull[F].f;
    return launch_kernel<f.n1, 0, f.s, f.xs>(p, maps, a, pdl, s);
}

/* p for at most C CTAs of `cols` columns in form f of kForms (kWide when cols is 0): down's tiles
 * and K splits over the same CTAs (a wide projection: just those CTAs) */
bool fill_plan(int hidden, int inter, int C, int cols, int f, pl_cuda_mlp_plan *p) {
    const mlp_form &fm = cols ? kForms[f] : kWide;
    const int tile = fm.n2, tiles = (hidden + tile - 1) / tile, ktd = inter / 64;
    if (tiles > C) return false;
    const int kt2 = (ktd + C / tiles - 1) / (C / tiles), splits = (ktd + kt2 - 1) / kt2;
    const size_t smem = form_smem(fm);
    if (smem > 227 * 1024) return false;
    *p = pl_cuda_mlp_plan{hidden, inter, cols ? C : tiles * splits, cols, tiles, tile, splits, kt2, f, smem, cols ? 1 : 0, 0};
    return true;
}

} // namespace

extern "C" int pl_cuda_mlp_plan_for(int hidden, int inter, int sms, pl_cuda_mlp_plan *p) {
    if (!p || hidden <= 0 || inter <= 0 || hidden % 64 || inter % 64 || sms <= 0) return 0;
    /* the most CTAs (a divisor of inter, at most one per SM) whose even column count a form takes */
    for (int C = sms < inter ? sms : inter; C >= 1; --C) {
        if (inter % C) continue;
        const int cols = inter / C;
        if (cols % 2) continue;
        const int n1 = 2 * ((cols + 7) / 8 * 8);
        for (int f = 0; f < kNumForms; ++f) {
            if (kForms[f].n1 != n1) continue;
            if (fill_plan(hidden, inter, C, cols, f, p)) return 1;
        }
    }
    return 0;
}

PL_DIAG_SETTER(pl_diag_set_mlp)

extern "C" int pl_cuda_mlp_available(void) {
    int *d = nullptr, v = 0;
    if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    mlp_probe<<<1, 1>>>(d);
    if (cudaMemcpy(&v, d, sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) v = 0;
    cudaFree(d);
    cudaGetLastError();
    return v;
}

extern "C" int pl_cuda_mlp_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w_gate_up, const void *w_down,
                                void *h, float *parts, int *cnt, int pdl, void *stream) {
    if (!p || p->form < 0 || p->form >= kNumForms || rows < 1 || rows > MR || x_rows < rows || !x || !w_gate_up || !w_down || !h ||
        !parts || !cnt)
        return (int)cudaErrorInvalidValue;
    const int H = p->hidden, I = p->inter, xr = x_rows < MR ? x_rows : MR;
    CUtensorMap m[4]; /* gate/up, x; down, h */
    if (!pl_cuda_tmap_2d_bf16(&m[0], w_gate_up, (uint64_t)H, 2ull * I, (uint64_t)H * 2, 64, (uint32_t)p->cols) ||
        !pl_cuda_tmap_2d_bf16(&m[1], x, (uint64_t)H, (uint64_t)xr, (uint64_t)H * 2, 64, MR) ||
        !pl_cuda_tmap_2d_bf16(&m[2], w_down, (uint64_t)I, (uint64_t)H, (uint64_t)I * 2, 64, (uint32_t)p->tile) ||
        !pl_cuda_tmap_2d_bf16(&m[3], h, (uint64_t)I, (uint64_t)rows, (uint64_t)I * 2, 64, MR))
        return (int)cudaErrorInvalidValue;
    const mlp_params a{static_cast<__nv_bfloat16 *>(h), parts, cnt, H, I, p->cols, p->tiles, p->tile, p->splits, H / 64, p->kt2, I / 64, rows,
                       p->coop, p->pre};
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (p->form) {
    case 0: return (int)launch_form<0>(p, m, a, pdl, s);
    case 1: return (int)launch_form<1>(p, m, a, pdl, s);
    case 2: return (int)launch_form<2>(p, m, a, pdl, s);
    default: return (int)launch_form<3>(p, m, a, pdl, s);
    }
}

/* One projection's maps for either phase (the other phase's two unused: the same again): w [n, k]
 * in boxes of box_rows rows, x of xr rows in boxes of 64 */
static bool proj_maps(CUtensorMap (&maps)[4], const void *w, int n, int k, int box_rows, const void *x, int xr) {
    if (!pl_cuda_tmap_2d_bf16(&maps[0], w, (uint64_t)k, (uint64_t)n, (uint64_t)k * 2, 64, (uint32_t)box_rows) ||
        !pl_cuda_tmap_2d_bf16(&maps[1], x, (uint64_t)k, (uint64_t)xr, (uint64_t)k * 2, 64, MR))
        return false;
    maps[2] = maps[0], maps[3] = maps[1];
    return true;
}

extern "C" int pl_cuda_wide_plan_for(int n, int k, int sms, pl_cuda_mlp_plan *p) {
    if (!p || n <= 0 || k <= 0 || k % 64 || sms <= 0) return 0;
    return fill_plan(n, k, sms, 0, 0, p) ? 1 : 0;
}

extern "C" int pl_cuda_wide_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w, float *parts, int pdl,
                                 void *stream) {
    if (!p || p->cols != 0 || p->form != 0 || rows < 1 || rows > MR || x_rows < rows || !x || !w || !parts)
        return (int)cudaErrorInvalidValue;
    const int N = p->hidden, K = p->inter;
    CUtensorMap maps[4];
    if (!proj_maps(maps, w, N, K, p->tile, x, x_rows < MR ? x_rows : MR)) return (int)cudaErrorInvalidValue;
    const mlp_params a{nullptr, parts, nullptr, N, K, 0, p->tiles, p->tile, p->splits, 0, p->kt2, K / 64, rows, 0, 0};
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    return (int)launch_kernel<kWide.n1, kWide.n2, kWide.s, kWide.xs>(p, maps, a, pdl, s);
}

extern "C" int pl_cuda_mlp_sum_bf16(const float *parts, int splits, int rows, int hidden, void *y, int pdl, void *stream) {
    if (!parts || !y || splits < 1 || rows < 1 || hidden < 8 || hidden % 8) return (int)cudaErrorInvalidValue;
    const int n8 = rows * hidden / 8;
    return (int)launch_pdl(mlp_sum_kernel, dim3((unsigned)((n8 + 255) / 256)), dim3(256), 0, static_cast<cudaStream_t>(stream), pdl, parts,
                           splits, n8, (size_t)rows * hidden, static_cast<__nv_bfloat16 *>(y));
}

extern "C" int pl_cuda_fullk_plan_for(int n, int k, int sms, int ring, pl_cuda_mlp_plan *p) {
    if (!p || n <= 0 || n % 2 || k <= 0 || k % 64 || sms <= 0) return 0;
    const int need = ((n + sms - 1) / sms + 7) / 8 * 8; /* columns per CTA at one CTA per SM */
    for (int f = 0; f < kNumFull; ++f) /* the narrowest tile of the ring that takes them (in width order) */
        if (kFull[f].ring == ring && kFull[f].f.n1 >= need) {
            const mlp_form &fm = kFull[f].f;
            *p = pl_cuda_mlp_plan{k, n, (n + fm.n1 - 1) / fm.n1, fm.n1, 0, 0, 0, 0, f, form_smem(fm), 0, 0};
            return 1;
        }
    return 0;
}

extern "C" int pl_cuda_fullk_bf16(const pl_cuda_mlp_plan *p, const void *x, int rows, int x_rows, const void *w, void *y, int pdl, void *stream) {
    if (!p || p->tiles != 0 || p->form < 0 || p->form >= kNumFull || p->cols != kFull[p->form].f.n1 || p->inter % 2 || p->hidden % 64 ||
        rows < 1 || rows > MR || x_rows < rows || !x || !w || !y || (((uintptr_t)x | (uintptr_t)w | (uintptr_t)y) & 15))
        return (int)cudaErrorInvalidValue;
    const int N = p->inter, K = p->hidden;
    CUtensorMap maps[4];
    if (!proj_maps(maps, w, N, K, p->cols, x, x_rows < MR ? x_rows : MR)) return (int)cudaErrorInvalidValue;
    const mlp_params a{static_cast<__nv_bfloat16 *>(y), nullptr, nullptr, K, N, p->cols, 0, 0, 0, K / 64, 0, 0, rows, 0, p->pre};
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (p->form) {
    case 0: return (int)launch_full<0>(p, maps, a, pdl, s);
    case 1: return (int)launch_full<1>(p, maps, a, pdl, s);
    case 2: return (int)launch_full<2>(p, maps, a, pdl, s);
    case 3: return (int)launch_full<3>(p, maps, a, pdl, s);
    case 4: return (int)launch_full<4>(p, maps, a, pdl, s);
    default: return (int)launch_full<5>(p, maps, a, pdl, s);
    }
}
