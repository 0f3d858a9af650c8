/* bf16 <-> f32. bf16 is the top half of an IEEE f32; widening is exact, narrowing rounds
 * to nearest even (NaN stays NaN, quiet). */
#ifndef PL_BASE_BF16_H
#define PL_BASE_BF16_H

#include <stdint.h>
#include <string.h>
#include <stddef.h>

static inline float pl_bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t pl_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

static inline float pl_bf16_round(float f) { return pl_bf16_to_f32(pl_f32_to_bf16(f)); }

void pl_bf16_from_f32_array(uint16_t *dst, const float *src, size_t n);
void pl_bf16_to_f32_array(float *dst, const uint16_t *src, size_t n);

#endif
