/* The micro-kernel bodies, written once in portable C over a vector width the including
 * file chooses; the AVX files add hand-written paths where the compiler needs help. */
#ifndef PL_ATTN_SIMD_H
#define PL_ATTN_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^x for x <= 0 (x >= -126 after clamping): 2^round(x) * poly(frac), |rel err| < 2e-7. */
static inline float pl_exp2_scalar(float x) {
    if (x < -126.0f) x = -126.0f;
    float n = rintf(x), f = x - n;
    float p = 1.5403530e-4f;
    p = p * f + 1.3333558e-3f;
    p = p * f + 9.6181291e-3f;
    p = p * f + 5.5504109e-2f;
    p = p * f + 2.4022651e-1f;
    p = p * f + 6.9314718e-1f;
    p = p * f + 1.0f;
    int32_t e = ((int32_t)n + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    return p * s;
}

#endif
