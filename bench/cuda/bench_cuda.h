/* Shared by the stand-alone CUDA benchmarks in bench/cuda: a CUDA call that must succeed
 * (a benchmark has no caller to hand the error to, so it reports and exits). */
#ifndef PL_BENCH_CUDA_H
#define PL_BENCH_CUDA_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

#endif
