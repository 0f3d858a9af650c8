/* Shared pieces of the stand-alone experiments that chain the backend's tile GEMM
 * (pl_cuda_gemv_bf16) over layers: a CUDA graph's replay time, and one projection's
 * weights for every layer (distinct, so cold) with its activations and K-split scratch.
 * Include after exp_util.cuh; link libpagellm.a. */
#ifndef PL_BENCH_EXP_CHAIN_CUH
#define PL_BENCH_EXP_CHAIN_CUH

#include <cuda_bf16.h>
#include <string.h>

#include "cuda/gemv_cuda.h"

namespace {

/* ms of one replay of a CUDA graph of what enqueue puts on s: median of 9 after a warm-up */
template <typename F> float graph_ms(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, F enqueue) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<float> t;
    CK(cudaGraphLaunch(ge, s)); /* warm-up */
    for (int r = 0; r < 9; r++) t.push_back(time_runs(s, e0, e1, 1, [&] { CK(cudaGraphLaunch(ge, s)); }));
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return median(t);
}

/* the tile GEMM's knobs (PDL launches) and K-split scratch for the largest of count [N, K]
 * shapes, at least min_bytes, zeroed */
pl_cuda_gemv_ws chain_ws(int sms, const int (*nk)[2], int count, size_t min_bytes) {
    pl_cuda_gemv_ws ws;
    memset(&ws, 0, sizeof ws);
    ws.sms = sms;
    ws.pdl = 1;
    size_t b = min_bytes;
    for (int i = 0; i < count; i++) {
        const size_t need = pl_cuda_gemv_ws_bytes(PL_CUDA_GEMV_TILE, nk[i][0], nk[i][1], &ws);
        b = need > b ? need : b;
    }
    CK(cudaMalloc(&ws.ptr, b));
    CK(cudaMemset(ws.ptr, 0, b));
    ws.bytes = b;
    return ws;
}

/* layers x W [N, K] (filled, distinct per layer), x [M, K], y [M, N], and the tile GEMM's
 * scratch (PDL launches) */
struct gemm_layers {
    std::vector<__nv_bfloat16 *> W;
    __nv_bfloat16 *x = nullptr, *y = nullptr;
    pl_cuda_gemv_ws ws;
    gemm_layers(cudaStream_t s, int layers, int M, int N, int K, int sms) : W((size_t)layers) {
        const size_t wel = (size_t)N * K;
        for (int l = 0; l < layers; l++) {
            CK(cudaMalloc(&W[l], wel * 2));
            fill<<<1024, 256, 0, s>>>(reinterpret_cast<uint32_t *>(W[l]), wel / 2, 77u + l);
        }
        CK(cudaMalloc(&x, (size_t)M * K * 2));
        CK(cudaMalloc(&y, (size_t)M * N * 2));
        fill<<<64, 256, 0, s>>>(reinterpret_cast<uint32_t *>(x), (size_t)M * K / 2, 5u);
        memset(&ws, 0, sizeof ws);
        ws.sms = sms;
        ws.pdl = 1;
        ws.bytes = pl_cuda_gemv_ws_bytes(PL_CUDA_GEMV_TILE, N, K, &ws);
        if (ws.bytes) {
            CK(cudaMalloc(&ws.ptr, ws.bytes));
            CK(cudaMemset(ws.ptr, 0, ws.bytes));
        }
        CK(cudaStreamSynchronize(s));
    }
    ~gemm_layers() {
        for (auto w : W) CK(cudaFree(w));
        CK(cudaFree(x));
        CK(cudaFree(y));
        if (ws.ptr) CK(cudaFree(ws.ptr));
    }
    gemm_layers(const gemm_layers &) = delete;
    gemm_layers &operator=(const gemm_layers &) = delete;
};

} // namespace

#endif
