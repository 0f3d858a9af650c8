/* The GPU's memory ceiling for benchmarks: device-to-device copy bandwidth, measured the same
 * way by every benchmark (bench-attention --device cuda, bench-serving --device cuda,
 * bench_model_cuda) so that their rooflines share one number. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "pagellm/cuda.h"
#include "pagellm/status.h"

namespace {

constexpr int kWarmup = 2;
constexpr int kMaxReps = 64;

/* Formats "what: CUDA message" into err and clears the (non-sticky) error state. */
double cuda_fail(cudaError_t e, const char *what, char *err, size_t err_len) {
    (void)cudaGetLastError();
    pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_measure_copy_gbps: %s: %s", what, cudaGetErrorString(e));
    return -1.0;
}

int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

} // namespace

extern "C" double pl_cuda_measure_copy_gbps(size_t bytes, int reps, char *device_name, size_t name_len, char *err,
                                            size_t err_len) {
    if (device_name && name_len) device_name[0] = '\0';
    if (bytes == 0) bytes = (size_t)2 << 30;
    if (reps == 0) reps = 10;
    if (reps < 1 || reps > kMaxReps) {
        pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_measure_copy_gbps: reps: %d outside [1, %d]", reps, kMaxReps);
        return -1.0;
    }
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_fail(e, "cudaGetDevice", err, err_len);
    if (device_name && name_len) {
        cudaDeviceProp prop;
        e = cudaGetDeviceProperties(&prop, dev);
        if (e != cudaSuccess) return cuda_fail(e, "cudaGetDeviceProperties", err, err_len);
        snprintf(device_name, name_len, "%s", prop.name);
    }
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double t[kMaxReps];
    const char *what = NULL;
    /* Every call is checked; the first failure names itself and skips the rest. */
    if ((e = cudaMalloc(&a, bytes)) != cudaSuccess) what = "cudaMalloc (source)";
    else if ((e = cudaMalloc(&b, bytes)) != cudaSuccess) what = "cudaMalloc (destination)";
    else if ((e = cudaMemset(a, 1, bytes)) != cudaSuccess) what = "cudaMemset";
    else if ((e = cudaEventCreate(&e0)) != cudaSuccess) what = "cudaEventCreate";
    else if ((e = cudaEventCreate(&e1)) != cudaSuccess) what = "cudaEventCreate";
    for (int i = 0; !what && i < kWarmup + reps; i++) {
        float ms = 0.0f;
        if ((e = cudaEventRecord(e0, 0)) != cudaSuccess) what = "cudaEventRecord";
        else if ((e = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0)) != cudaSuccess) what = "cudaMemcpyAsync";
        else if ((e = cudaEventRecord(e1, 0)) != cudaSuccess) what = "cudaEventRecord";
        else if ((e = cudaEventSynchronize(e1)) != cudaSuccess) what = "cudaEventSynchronize";
        else if ((e = cudaEventElapsedTime(&ms, e0, e1)) != cudaSuccess) what = "cudaEventElapsedTime";
        else if (i >= kWarmup) t[i - kWarmup] = (double)ms * 1e-3;
    }
    /* release everything; a release failure is reported only when nothing failed before */
    cudaError_t re = cudaSuccess, r;
    if (e1 && (r = cudaEventDestroy(e1)) != cudaSuccess && re == cudaSuccess) re = r;
    if (e0 && (r = cudaEventDestroy(e0)) != cudaSuccess && re == cudaSuccess) re = r;
    if (b && (r = cudaFree(b)) != cudaSuccess && re == cudaSuccess) re = r;
    if (a && (r = cudaFree(a)) != cudaSuccess && re == cudaSuccess) re = r;
    if (what) return cuda_fail(e, what, err, err_len);
    if (re != cudaSuccess) return cuda_fail(re, "release (cudaEventDestroy / cudaFree)", err, err_len);
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    const double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    if (!(med > 0.0)) {
        pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_measure_copy_gbps: median copy time %g s is not positive", med);
        return -1.0;
    }
    return 2.0 * (double)bytes / med / 1e9;
}
