/* Experiment: would one persistent kernel stream a chain of decode GEMMs closer to the copy
 * bandwidth than one launch per GEMM? The tile GEMM costs ~7 us more than its bytes in
 * isolation and ~3-5 us inside a launch chain (PERF.md, fifth CUDA session). Here 36 layers of
 * Qwen3-4B projections run at M = 4 token rows on distinct weights (no L2 reuse), each GEMM
 * reading the previous one's output, as "MLP" (gate_up [19456 x 2560], down [2560 x 9728])
 * and as "layer" (qkv, o, gate_up, down: the 7.27 GB of a decode step's projections):
 *   chain:      one launch per GEMM of the backend's tile-GEMM shape (128 weight rows x 64 k
 *               per stage, 4-stage cp.async ring, K split for ~2 CTAs per SM, the last CTA of
 *               a tile adds the splits in order), captured in a CUDA graph: with programmatic
 *               dependent launch and the trigger at the top (the backend's way), after the
 *               main loop, or at exit; without PDL; and with a small elementwise kernel after
 *               each GEMM (standing in for the norm / SwiGLU launches);
 *   persistent: one launch of 2 CTAs per SM walking the same (tile, split) items GEMM by
 *               GEMM, a grid-wide barrier between GEMMs (and around each small op); before a
 *               barrier a CTA issues the weight stages of its next item;
 *   dataflow:   the same walk without barriers: an item waits only for the producer tiles
 *               its k range reads (done flags), after issuing its weight stages.
 * Every variant computes the same items with the same split order, so outputs must be
 * bit-identical (checked). Results: bench/cuda/results-h200-model/session5/runs/run1[4-7]_*.
 *
 * Not part of the build. On a GPU machine:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Isrc bench/cuda/exp_persistent_chain.cu -o exp_persistent_chain
 *   ./exp_persistent_chain
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

constexpr int TW = 8, TBM = 128, TBK = 64, TST = 4, M = 4, LAYERS = 36;
constexpr int T_WBYTES = TBM * TBK * 2, T_XBYTES = 16 * TBK * 2, T_STAGE = T_WBYTES + T_XBYTES, T_SMEM = TST * T_STAGE;
constexpr int T_PART = TW * 32 * 8; /* floats of a partial tile (two 8-token fragments per thread) */

struct gemm {
    const __nv_bfloat16 *W, *x;
    __nv_bfloat16 *y;
    int N, K, ks, ldx; /* x row r starts at x + r * ldx */
    float *ws;         /* [ks][tiles][T_PART] */
    int *cnt;          /* [tiles] */
    int *done;         /* dataflow: [tiles], set when a tile of y is stored */
    const int *dep;    /* dataflow: the producer's done flags (x's columns c come from its tile c / 128) */
    int trig;          /* chain: when the next kernel may launch: 0 at the top, 1 after the main loop, 2 at exit */
};

__host__ __device__ __forceinline__ int items(const gemm &g) { return (g.N / TBM) * g.ks; }

/* the W stages 0..TST-2 of item `it` into the ring (not committed) */
__device__ __forceinline__ void issue_w(const gemm &g, int it, uint32_t sb) {
    const int tid = threadIdx.x, tile = it % (g.N / TBM), sp = it / (g.N / TBM), KT = g.K / TBK;
    const int kt0 = KT * sp / g.ks, nkt = KT * (sp + 1) / g.ks - kt0;
    for (int j = 0; j < TST - 1 && j < nkt; ++j)
#pragma unroll
        for (int i = 0; i < T_WBYTES / 16 / (TW * 32); ++i) {
            const int q = tid + i * TW * 32, r = q >> 3, ch = q & 7;
            cp_async16(sb + j * T_STAGE + swz128(r, ch), g.W + (size_t)(tile * TBM + r) * g.K + (kt0 + j) * TBK + ch * 8, 16);
        }
}

/* one (tile, split) item; its first W stages already issued */
__device__ void run_item(const gemm &g, int it, uint32_t sb) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, tiles = g.N / TBM;
    const int tile = it % tiles, sp = it / tiles, KT = g.K / TBK;
    const int kt0 = KT * sp / g.ks, nkt = KT * (sp + 1) / g.ks - kt0;
    auto load_x = [&](int st, int kt) {
        if (tid < 16 * 8) {
            const int r = tid >> 3, ch = tid & 7;
            cp_async16(sb + st * T_STAGE + T_WBYTES + swz128(r, ch), g.x + (size_t)(r < M ? r : 0) * g.ldx + kt * TBK + ch * 8,
                       r < M ? 16 : 0);
        }
    };
    auto load_w = [&](int st, int kt) {
#pragma unroll
        for (int i = 0; i < T_WBYTES / 16 / (TW * 32); ++i) {
            const int q = tid + i * TW * 32, r = q >> 3, ch = q & 7;
            cp_async16(sb + st * T_STAGE + swz128(r, ch), g.W + (size_t)(tile * TBM + r) * g.K + kt * TBK + ch * 8, 16);
        }
    };
    if (g.dep) { /* wait for the producer tiles of our k range only */
        if (tid == 0)
            for (int p = kt0 * TBK / TBM; p <= ((kt0 + nkt) * TBK - 1) / TBM; ++p) {
                int v;
                do asm volatile("ld.acquire.gpu.b32 %0, [%1];\n" : "=r"(v) : "l"(g.dep + p));
                while (v == 0);
            }
        __syncthreads();
    }
    for (int j = 0; j < TST - 1; ++j) {
        if (j < nkt) load_x(j, kt0 + j);
        cp_async_commit();
    }
    float acc[2][4] = {};
    for (int i = 0; i < nkt; ++i) {
        cp_async_wait<TST - 2>();
        __syncthreads();
        if (i + TST - 1 < nkt) load_w((i + TST - 1) % TST, kt0 + i + TST - 1), load_x((i + TST - 1) % TST, kt0 + i + TST - 1);
        cp_async_commit();
        const uint32_t wsm = sb + (i % TST) * T_STAGE, xsm = wsm + T_WBYTES;
        stage_mma(wsm, xsm, warp, lane, acc);
    }
    cp_async_wait<0>();
    if (g.trig == 1) pdl_trigger();
    __syncthreads(); /* the ring is free for the next item's stages */
    if (g.ks > 1) {
        float *mine = g.ws + ((size_t)sp * tiles + tile) * T_PART + tid * 8;
        reinterpret_cast<float4 *>(mine)[0] = make_float4(acc[0][0], acc[0][1], acc[0][2], acc[0][3]);
        reinterpret_cast<float4 *>(mine)[1] = make_float4(acc[1][0], acc[1][1], acc[1][2], acc[1][3]);
        __shared__ int last;
        __threadfence();
        __syncthreads();
        if (tid == 0) last = atomicAdd(&g.cnt[tile], 1) == g.ks - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
        float s[8] = {};
        for (int r0 = 0; r0 < g.ks; r0 += 8) { /* 8 splits' loads in flight, added in order */
            float4 u[8], v[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const float4 *p = reinterpret_cast<const float4 *>(g.ws + ((size_t)(r0 + j) * tiles + tile) * T_PART + tid * 8);
                u[j] = r0 + j < g.ks ? __ldcg(p) : make_float4(0.f, 0.f, 0.f, 0.f);
                v[j] = r0 + j < g.ks ? __ldcg(p + 1) : make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int j = 0; j < 8; ++j)
                s[0] += u[j].x, s[1] += u[j].y, s[2] += u[j].z, s[3] += u[j].w, s[4] += v[j].x, s[5] += v[j].y, s[6] += v[j].z,
                    s[7] += v[j].w;
        }
        for (int e = 0; e < 4; ++e) acc[0][e] = s[e], acc[1][e] = s[4 + e];
        if (tid == 0) g.cnt[tile] = 0;
    }
    /* C fragment: i = 0, 1: row g, tokens 2t, 2t + 1; i = 2, 3: row g + 8; tokens < M only */
    for (int nt = 0; nt < 2; ++nt)
        for (int e = 0; e < 4; ++e) {
            const int row = tile * TBM + warp * 16 + (lane >> 2) + (e >= 2 ? 8 : 0), tok = nt * 8 + 2 * (lane & 3) + (e & 1);
            if (tok < M) g.y[(size_t)tok * g.N + row] = __float2bfloat16_rn(acc[nt][e]);
        }
    if (g.done) { /* dataflow: y's tile is out */
        __threadfence();
        __syncthreads();
        if (tid == 0) atomicExch(&g.done[tile], 1);
    }
}

/* a small elementwise op between GEMMs (standing in for SwiGLU / add + RMSNorm): y *= 0.5
 * over the M x N output of the GEMM before, 2048 elements per CTA */
__device__ __forceinline__ void small_item(const gemm &g, int it) {
    for (int i = it * 2048 + threadIdx.x; i < (it + 1) * 2048 && i < M * g.N; i += blockDim.x)
        g.y[i] = __float2bfloat16_rn(__bfloat162float(g.y[i]) * 0.5f);
}
__host__ __device__ __forceinline__ int small_items(const gemm &g) { return (M * g.N + 2047) / 2048; }
__global__ void __launch_bounds__(TW * 32) small_kernel(const gemm g) {
    pdl_trigger();
    pdl_wait();
    small_item(g, blockIdx.x);
}

/* one GEMM, one launch (the chain): item = blockIdx.x */
__global__ void __launch_bounds__(TW * 32, 2) gemm_kernel(const gemm g) {
    extern __shared__ __align__(128) unsigned char tsm[];
    if (g.trig == 0) pdl_trigger();
    const uint32_t sb = smem_u32(tsm);
    issue_w(g, blockIdx.x, sb);
    pdl_wait();
    run_item(g, blockIdx.x, sb);
}

__device__ __forceinline__ void grid_barrier(unsigned *bar, unsigned target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(bar, 1u);
        unsigned v;
        do asm volatile("ld.acquire.gpu.u32 %0, [%1];\n" : "=r"(v) : "l"(bar));
        while (v < target);
    }
    __syncthreads();
}

/* all GEMMs, one launch: items strided over the grid, a grid barrier between GEMMs (and
 * around the small op after each when small != 0) */
__global__ void __launch_bounds__(TW * 32, 2) persistent_kernel(const gemm *gs, int ng, unsigned *bar, int small) {
    extern __shared__ __align__(128) unsigned char tsm[];
    const uint32_t sb = smem_u32(tsm);
    const int C = gridDim.x, c = blockIdx.x;
    unsigned nb = 0; /* barriers passed */
    if (c < items(gs[0])) issue_w(gs[0], c, sb);
    for (int k = 0; k < ng; ++k) {
        const gemm g = gs[k];
        const int n = items(g);
        for (int it = c; it < n; it += C) {
            run_item(g, it, sb);
            if (it + C < n) issue_w(g, it + C, sb);
        }
        if (k + 1 == ng) break;
        /* the next GEMM's weights do not depend on this one: out before the barrier */
        if (c < items(gs[k + 1])) issue_w(gs[k + 1], c, sb);
        grid_barrier(bar, ++nb * C);
        if (small) {
            for (int it = c; it < small_items(g); it += C) small_item(g, it);
            grid_barrier(bar, ++nb * C);
        }
    }
}

/* all GEMMs, one launch, no barriers: the persistent kernel's item order (CTA c takes items
 * c, c + C, ... of each GEMM in turn), but an item waits only for the producer tiles its k
 * range reads, after issuing its weight stages */
__global__ void __launch_bounds__(TW * 32, 2) dataflow_kernel(const gemm *gs, int ng) {
    extern __shared__ __align__(128) unsigned char tsm[];
    const uint32_t sb = smem_u32(tsm);
    const int C = gridDim.x, c = blockIdx.x;
    for (int k = 0; k < ng; ++k) {
        const gemm g = gs[k];
        for (int it = c; it < items(g); it += C) {
            issue_w(g, it, sb);
            run_item(g, it, sb);
        }
    }
}



struct shape {
    int N, K;
};

/* 36 layers of the given GEMMs (GEMM j reads GEMM j - 1's output viewed as [M x K_j]); returns
 * nonzero when the two ways disagree */
int run_config(const char *name, const std::vector<shape> &layer, int sms, int C, double copy_gbps, cudaStream_t s) {
    size_t per_layer = 0;
    for (const shape &sh : layer) per_layer += (size_t)sh.N * sh.K * 2;
    __nv_bfloat16 *W = nullptr, *act = nullptr;
    CK(cudaMalloc(&W, per_layer * LAYERS));
    fill<<<sms * 8, 256>>>(reinterpret_cast<uint32_t *>(W), per_layer * LAYERS / 4, 1);
    size_t act_elems = (size_t)M * layer.back().N;
    for (const shape &sh : layer) act_elems += (size_t)LAYERS * M * sh.N;
    CK(cudaMalloc(&act, act_elems * 2));
    fill<<<sms, 256>>>(reinterpret_cast<uint32_t *>(act), (size_t)M * layer.back().N / 2, 2);
    auto ks_for = [&](int N, int K) { /* the backend's split: ~2 CTAs per SM, >= 4 k steps, <= 16 */
        int ks = 2 * sms / (N / TBM), kt = K / TBK;
        if (ks > kt / 4) ks = kt / 4;
        if (ks > 16) ks = 16;
        return ks < 1 ? 1 : ks;
    };
    float *ws = nullptr;
    int *cnt = nullptr;
    CK(cudaMalloc(&ws, (size_t)4 * sms * T_PART * 4));
    CK(cudaMalloc(&cnt, 4096));
    CK(cudaMemset(cnt, 0, 4096));
    std::vector<gemm> gs;
    const __nv_bfloat16 *x = act, *wl = W;
    __nv_bfloat16 *out = act + (size_t)M * layer.back().N;
    int ldx = layer.back().N;
    for (int l = 0; l < LAYERS; l++)
        for (const shape &sh : layer) {
            gs.push_back({wl, x, out, sh.N, sh.K, ks_for(sh.N, sh.K), ldx, ws, cnt, nullptr, nullptr, 0});
            wl += (size_t)sh.N * sh.K;
            x = out;
            ldx = sh.N;
            out += (size_t)M * sh.N;
        }
    /* the dataflow kernel's copy: GEMMs overlap, so scratch and counters rotate over 8 sets,
     * and each GEMM has done flags its consumer waits on */
    constexpr int ROT = 8, FLAGS = 256;
    float *ws8 = nullptr;
    int *cnt8 = nullptr, *done = nullptr;
    CK(cudaMalloc(&ws8, (size_t)ROT * 4 * sms * T_PART * 4));
    CK(cudaMalloc(&cnt8, (size_t)ROT * FLAGS * 4));
    CK(cudaMemset(cnt8, 0, (size_t)ROT * FLAGS * 4));
    CK(cudaMalloc(&done, gs.size() * FLAGS * 4));
    std::vector<gemm> gd = gs;
    for (size_t k = 0; k < gd.size(); k++) {
        gd[k].ws = ws8 + (size_t)(k % ROT) * 4 * sms * T_PART;
        gd[k].cnt = cnt8 + (k % ROT) * FLAGS;
        gd[k].done = done + k * FLAGS;
        gd[k].dep = k ? done + (k - 1) * FLAGS : nullptr;
    }
    gemm *dgd = nullptr;
    CK(cudaMalloc(&dgd, sizeof(gemm) * gd.size()));
    CK(cudaMemcpy(dgd, gd.data(), sizeof(gemm) * gd.size(), cudaMemcpyHostToDevice));
    gemm *dgs = nullptr;
    unsigned *bar = nullptr;
    CK(cudaMalloc(&dgs, sizeof(gemm) * gs.size()));
    CK(cudaMemcpy(dgs, gs.data(), sizeof(gemm) * gs.size(), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&bar, 4));
    /* the chain as graphs of PDL launches, without and with a small op after each GEMM */
    /* GEMMs only, with small ops, GEMMs only without PDL; GEMMs only and with small ops with the
     * trigger after the main loop; the same with no trigger (at exit) */
    cudaGraphExec_t execs[7];
    for (int v = 0; v < 7; v++) {
        const int small = v == 1 || v == 4 || v == 6, pdl = v != 2, trig = v < 3 ? 0 : v < 5 ? 1 : 2;
        cudaGraph_t graph;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (size_t k = 0; k < gs.size(); k++) {
            gemm g = gs[k];
            g.trig = trig;
            CK(launch_pdl(gemm_kernel, dim3(items(g)), dim3(TW * 32), (size_t)T_SMEM, s, pdl, g));
            if (small && k + 1 < gs.size()) CK(launch_pdl(small_kernel, dim3(small_items(gs[k])), dim3(TW * 32), 0, s, 1, gs[k]));
        }
        CK(cudaStreamEndCapture(s, &graph));
        CK(cudaGraphInstantiate(&execs[v], graph, 0));
        CK(cudaGraphDestroy(graph));
    }
    const size_t yl = (size_t)M * layer.back().N; /* the last GEMM's y */
    std::vector<__nv_bfloat16> y_chain(yl), y_pers(yl), y_ref;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> tc[2], tp[2];
    bool same[2];
    /* each timing covers REP back-to-back runs (clocks stay up, as in a serving loop) */
    const int REP = 10;
    for (int small = 0; small < 2; small++) {
        CK(cudaGraphLaunch(execs[small], s));
        CK(cudaMemcpyAsync(y_chain.data(), x, yl * 2, cudaMemcpyDeviceToHost, s));
        CK(cudaMemsetAsync(bar, 0, 4, s));
        persistent_kernel<<<C, TW * 32, T_SMEM, s>>>(dgs, (int)gs.size(), bar, small);
        CK(cudaMemcpyAsync(y_pers.data(), x, yl * 2, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        for (int r = 0; r < 7; r++) {
            tc[small].push_back(time_runs(s, e0, e1, REP, [&] { CK(cudaGraphLaunch(execs[small], s)); }));
            tp[small].push_back(time_runs(s, e0, e1, REP, [&] {
                CK(cudaMemsetAsync(bar, 0, 4, s));
                persistent_kernel<<<C, TW * 32, T_SMEM, s>>>(dgs, (int)gs.size(), bar, small);
            }));
        }
        same[small] = memcmp(y_chain.data(), y_pers.data(), yl * 2) == 0;
        if (!small) y_ref = y_chain; /* the GEMMs-only result, for the dataflow kernel */
    }
    std::vector<float> tv[7];
    for (int r = 0; r < 7; r++)
        for (int v = 2; v < 7; v++) tv[v].push_back(time_runs(s, e0, e1, REP, [&] { CK(cudaGraphLaunch(execs[v], s)); }));
    std::vector<__nv_bfloat16> y_df(yl);
    std::vector<float> td;
    auto dataflow = [&] {
        CK(cudaMemsetAsync(done, 0, gs.size() * FLAGS * 4, s));
        dataflow_kernel<<<C, TW * 32, T_SMEM, s>>>(dgd, (int)gd.size());
    };
    time_runs(s, e0, e1, REP, dataflow); /* warm-up, and the output to check */
    CK(cudaMemcpy(y_df.data(), x, yl * 2, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 7; r++) td.push_back(time_runs(s, e0, e1, REP, dataflow));
    const bool same_df = memcmp(y_ref.data(), y_df.data(), yl * 2) == 0;
    const double bytes = (double)per_layer * LAYERS, ideal_ms = bytes / (copy_gbps * 1e9) * 1e3;
    printf("%s: 36 layers x %zu GEMMs (", name, layer.size());
    for (size_t j = 0; j < layer.size(); j++) printf("%s[%d x %d] ks %d", j ? ", " : "", layer[j].N, layer[j].K, gs[j].ks);
    printf("), M = %d: %.2f GB of weights, ideal %.3f ms at the copy rate\n", M, bytes / 1e9, ideal_ms);
    auto report = [&](const char *what, const std::vector<float> &t, const char *outputs) {
        const float ms = median(t);
        printf("  %s: %.3f ms = %.2fx ideal, %.0f GB/s%s%s\n", what, ms, ms / ideal_ms, bytes / (ms * 1e-3) / 1e9,
               outputs ? "; outputs " : "", outputs ? outputs : "");
    };
    for (int small = 0; small < 2; small++) {
        printf("  %s\n", small ? "with a small op after each GEMM (one more launch / barrier each):" : "GEMMs only:");
        report("  chain (PDL launches in a graph)", tc[small], nullptr);
        report("  persistent (1 launch, grid barriers)", tp[small], same[small] ? "identical" : "DIFFER");
    }
    {
        static const char *vn[7] = {"", "", "chain without PDL (GEMMs only)", "chain, trigger after the main loop (GEMMs only)",
                                    "chain, trigger after the main loop, with small ops", "chain, no trigger (at exit; GEMMs only)",
                                    "chain, no trigger, with small ops"};
        for (int v = 2; v < 7; v++) report(vn[v], tv[v], nullptr);
        report("dataflow (1 launch, no barriers; an item waits for the producer tiles it reads)", td, same_df ? "identical" : "DIFFER");
    }
    for (int v = 0; v < 7; v++) CK(cudaGraphExecDestroy(execs[v]));
    CK(cudaFree(ws8));
    CK(cudaFree(cnt8));
    CK(cudaFree(done));
    CK(cudaFree(dgd));
    CK(cudaFree(W));
    CK(cudaFree(act));
    CK(cudaFree(ws));
    CK(cudaFree(cnt));
    CK(cudaFree(dgs));
    CK(cudaFree(bar));
    return same[0] && same[1] && same_df ? 0 : 1;
}

} // namespace

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM));
    CK(cudaFuncSetAttribute(persistent_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM));
    CK(cudaFuncSetAttribute(dataflow_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T_SMEM));
    int occ = 0, occ_df = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, persistent_kernel, TW * 32, T_SMEM));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_df, dataflow_kernel, TW * 32, T_SMEM));
    if (occ_df < occ) occ = occ_df; /* every CTA of both must be resident at once */
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const double copy_gbps = copy_ceiling_gbps(s); /* same run */
    printf("device: %d SMs, %d CTAs per SM; copy %.0f GB/s (read + write)\n", sms, occ, copy_gbps);
    int rc = 0;
    rc |= run_config("MLP", {{19456, 2560}, {2560, 9728}}, sms, sms * occ, copy_gbps, s);
    rc |= run_config("layer", {{6144, 2560}, {2560, 4096}, {19456, 2560}, {2560, 9728}}, sms, sms * occ, copy_gbps, s);
    return rc;
}
