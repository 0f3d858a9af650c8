/* Experiment: what does the host pay for cudaGraphLaunch? A replayed decode step waits for its
 * first segment's launch call (11-38 us in bench_model_cuda on the H200 machine), and that
 * segment holds the step's staged uploads as host-to-device memcpy nodes. Graphs of 12 or 40
 * small kernels, with 0 or 4 memcpy nodes (2 KiB each from pinned memory) and 16-byte or
 * 512-byte __grid_constant__ parameters; the launch call's host time, median of 50, then
 * again after cudaGraphUpload.
 * Build: nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o exp_graph_launch exp_graph_launch.cu
 * Measured on the H200 machine (PERF.md, eighteenth session): 1.8-1.9 us without memcpy
 * nodes at either kernel count or parameter size, 8.9-9.1 us with four; cudaGraphUpload
 * changes nothing. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
#include <algorithm>
#include <vector>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
struct Big { char b[512]; };
__global__ void small_k(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.f; }
__global__ void big_k(const __grid_constant__ Big p, float *x) { if (threadIdx.x == 0) x[blockIdx.x] += p.b[blockIdx.x & 511]; }
int main() {
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    float *x; cudaMalloc(&x, 1 << 20);
    char *h, *d; cudaMallocHost(&h, 1 << 20); cudaMalloc(&d, 1 << 20);
    Big bp = {};
    const int Ks[] = {12, 40}, Ms[] = {0, 4}, Bs[] = {0, 1};
    for (int K : Ks) for (int M : Ms) for (int BIG : Bs) {
        cudaGraph_t g; cudaGraphExec_t e;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
        for (int m = 0; m < M; m++) cudaMemcpyAsync(d + m * 4096, h + m * 4096, 2048, cudaMemcpyHostToDevice, s);
        for (int k = 0; k < K; k++) {
            if (BIG) big_k<<<132, 128, 0, s>>>(bp, x); else small_k<<<132, 128, 0, s>>>(x, 1 << 16);
        }
        cudaStreamEndCapture(s, &g);
        cudaGraphInstantiate(&e, g, 0);
        std::vector<double> t, tu;
        for (int it = 0; it < 60; it++) {
            double t0 = now(); cudaGraphLaunch(e, s); double t1 = now();
            cudaStreamSynchronize(s);
            if (it >= 10) t.push_back(t1 - t0);
        }
        cudaGraphUpload(e, s); cudaStreamSynchronize(s);
        for (int it = 0; it < 30; it++) {
            double t0 = now(); cudaGraphLaunch(e, s); double t1 = now();
            cudaStreamSynchronize(s);
            if (it >= 5) tu.push_back(t1 - t0);
        }
        std::sort(t.begin(), t.end()); std::sort(tu.begin(), tu.end());
        printf("kernels %2d  memcpy nodes %d  param %s: launch call median %.1f us (p90 %.1f); after cudaGraphUpload %.1f us\n",
               K, M, BIG ? "512 B" : "16 B ", t[t.size() / 2] * 1e6, t[t.size() * 9 / 10] * 1e6, tu[tu.size() / 2] * 1e6);
        cudaGraphExecDestroy(e); cudaGraphDestroy(g);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
