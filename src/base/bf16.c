#include "base/bf16.h"

void pl_bf16_from_f32_array(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = pl_f32_to_bf16(src[i]);
}

void pl_bf16_to_f32_array(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = pl_bf16_to_f32(src[i]);
}
