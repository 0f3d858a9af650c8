/* Host side of the CUDA backend that needs OpenMP (nvcc's host pass has none here):
 * widening weight sources and narrowing them to the upload dtype on all cores. */
#include <stdlib.h>

#include "base/bf16.h"
#include "cuda/backend_cuda.h"
#include "model/model_internal.h"

int pl_cuda_pack_rows(const pl_weight_src *const *parts, int num_parts, int row0, int n, int cols, int bf16,
                      void *out) {
    int failed = 0;
#pragma omp parallel
    {
        float *tmp = malloc(sizeof(float) * (size_t)cols);
        if (!tmp) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (int i = 0; i < n; i++) {
            if (!tmp) continue;
            int r = row0 + i, pi = 0;
            while (pi < num_parts - 1 && r >= parts[pi]->rows) r -= parts[pi++]->rows;
            pl_weight_src_row(parts[pi], r, tmp);
            if (bf16)
                pl_bf16_from_f32_array((uint16_t *)out + (size_t)i * cols, tmp, (size_t)cols);
            else
                for (int k = 0; k < cols; k++) ((float *)out)[(size_t)i * cols + k] = tmp[k];
        }
        free(tmp);
    }
    return failed ? PL_ERR_NOMEM : PL_OK;
}
