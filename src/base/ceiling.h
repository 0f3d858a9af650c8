/* Machine ceilings measured in the same run as a benchmark, so every figure can be stated
 * as a ratio to what this machine (shared, noisy) reaches right now. */
#ifndef PL_BASE_CEILING_H
#define PL_BASE_CEILING_H

typedef struct pl_ceilings {
    double read_gbps;       /* streaming read bandwidth, buffer far larger than the LLC */
    double fma_f32_gflops;  /* f32 FMA rate (AVX-512 if present, else AVX2, else scalar) */
    double bf16_dot_gflops; /* vdpbf16ps rate with AVX512_BF16, else 0 */
    int threads;            /* threads used for all three */
} pl_ceilings;

/* threads <= 0: the OpenMP default. seconds_budget <= 0: about 1.5 s in all.
 * Each figure is the best of several timed passes. PL_OK, or PL_ERR_NOMEM. */
int pl_measure_ceilings(int threads, double seconds_budget, pl_ceilings *out);

/* The SIMD level the ceilings (and attention kernels) pick on this CPU: "avx512-bf16",
 * "avx512", "avx2", or "portable". */
const char *pl_cpu_simd_name(void);

#endif
