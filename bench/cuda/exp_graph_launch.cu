/* Experiment: what does the host pay for cudaGraphLaunch, and how long until a launched graph has
 * run? A replayed decode step waits for its first segment's launch call (11-39 us in
 * bench_model_cuda on the H200 machine), and that segment holds the step's staged uploads as
 * host-to-device memcpy nodes. Graphs of 12 or 40 small kernels (plain launches, or with
 * programmatic dependent launch as the backend's), their uploads (0 or 4 x 2 KiB from pinned
 * memory) as memcpy nodes in the graph or as one cudaMemcpyAsync of 8 KiB on the stream before
 * the launch, 16-byte or 512-byte __grid_constant__ parameters. Per form, medians of 50: the
 * launch call (and the copy call before it), and the round trip from before those calls to the
 * return of cudaStreamSynchronize (what an idle device waits plus what the graph takes).
 * Build: nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o exp_graph_launch exp_graph_launch.cu
 * Measured on the H200 machine (PERF.md, eighteenth session): 1.8-1.9 us without memcpy
 * nodes at either kernel count or parameter size, 8.9-9.1 us with four; cudaGraphUpload
 * changes nothing. Forty-second session: see PERF.md. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
#include <algorithm>
#include <vector>
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
struct Big { char b[512]; };
__global__ void small_k(float *x, int n) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.f;
}
__global__ void big_k(const __grid_constant__ Big p, float *x) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;");
    if (threadIdx.x == 0) x[blockIdx.x] += p.b[blockIdx.x & 511];
}
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2] * 1e6; }
int main() {
    cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    float *x; cudaMalloc(&x, 1 << 20);
    char *h, *d; cudaMallocHost(&h, 1 << 20); cudaMalloc(&d, 1 << 20);
    Big bp = {};
    /* M: 0 no uploads, 4 memcpy nodes in the graph, -1 one memcpy on the stream before the launch */
    const int Ks[] = {12, 40}, Ms[] = {0, 4, -1}, Bs[] = {0, 1}, Ps[] = {0, 1};
    printf("%-7s %-14s %-6s %-4s %12s %12s %14s\n", "kernels", "uploads", "param", "PDL", "copy call us", "launch us", "round trip us");
    for (int K : Ks) for (int M : Ms) for (int BIG : Bs) for (int PDL : Ps) {
        if (BIG && K == 40) continue;
        cudaGraph_t g; cudaGraphExec_t e;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
        for (int m = 0; m < M; m++) cudaMemcpyAsync(d + m * 4096, h + m * 4096, 2048, cudaMemcpyHostToDevice, s);
        for (int k = 0; k < K; k++) {
            cudaLaunchConfig_t c = {};
            c.gridDim = dim3(132), c.blockDim = dim3(128), c.stream = s;
            cudaLaunchAttribute a[1];
            a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            a[0].val.programmaticStreamSerializationAllowed = 1;
            c.attrs = a, c.numAttrs = PDL && k > 0 ? 1 : 0;
            if (BIG) cudaLaunchKernelEx(&c, big_k, bp, x);
            else cudaLaunchKernelEx(&c, small_k, x, 1 << 16);
        }
        if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&e, g, 0) != cudaSuccess) {
            printf("capture failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
        std::vector<double> tc, tl, tr;
        for (int it = 0; it < 60; it++) {
            double t0 = now();
            if (M < 0) cudaMemcpyAsync(d, h, 8192, cudaMemcpyHostToDevice, s);
            double t1 = now();
            cudaGraphLaunch(e, s);
            double t2 = now();
            cudaStreamSynchronize(s);
            double t3 = now();
            if (it >= 10) tc.push_back(t1 - t0), tl.push_back(t2 - t1), tr.push_back(t3 - t0);
        }
        printf("%-7d %-14s %-6s %-4s %12.1f %12.1f %14.1f\n", K, M == 0 ? "none" : M > 0 ? "4 nodes" : "1 copy before", BIG ? "512 B" : "16 B",
               PDL ? "yes" : "no", med(tc), med(tl), med(tr));
        cudaGraphExecDestroy(e); cudaGraphDestroy(g);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
