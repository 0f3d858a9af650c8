/* Element helpers shared by the CUDA kernels: act dtype conversions with the CPU path's
 * rounding, warp sums, and the q/k RMSNorm + RoPE of one head held in a warp's registers
 * (the backend's rope kernels and the decode attention's fused rope use the same code, so
 * they give the same bits). */
#ifndef PL_CUDA_ELEM_CUH
#define PL_CUDA_ELEM_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>

namespace {

__device__ __forceinline__ float tof(float x) { return x; }
__device__ __forceinline__ float tof(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T fromf(float x);
template <> __device__ __forceinline__ float fromf<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 fromf<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
/* The value an intermediate takes when stored in the act dtype (as the CPU path rounds). */
template <typename T> __device__ __forceinline__ float round_act(float x) { return tof(fromf<T>(x)); }

/* SwiGLU of one gate value g and up value u (both already act values): silu(g) rounded to T,
 * times u, in T. The SwiGLU kernel and the fused MLP's epilogue use it, so they give the same
 * bits. */
template <typename T> __device__ __forceinline__ T swiglu_act(float g, float u) { return fromf<T>(round_act<T>(g / (1.0f + expf(-g))) * u); }

template <typename R> __device__ __forceinline__ R warp_sum(R v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* The half-split rotation of one pair (element i and i + hd / 2) by cos c and sin s, each
 * value rounded to T: the one expression every rope kernel uses, so they give the same bits. */
template <typename T> __device__ __forceinline__ void rope_rot(float x0, float x1, float c, float s, float &y0, float &y1) {
    y0 = round_act<T>(x0 * c - x1 * s);
    y1 = round_act<T>(x1 * c + x0 * s);
}

/* One head of hd = 32 * E values in a warp, lane l holding elements l + 32 j (E even): RMSNorm
 * with weights wv (the lane's elements, rounded to the act dtype as the CPU path), then the
 * half-split rotation (element i with i + hd / 2: the lane's own j and j + E / 2) by the row's
 * cos / sin (cs[j], sn[j]: elements lane + 32 j, j < E / 2), in place, each value rounded to T. */
template <typename T, int E>
__device__ __forceinline__ void norm_rope_lane(float (&x)[E], const float *wv, float eps, const float *cs, const float *sn) {
    static_assert(E % 2 == 0, "E even");
    constexpr int hd = 32 * E;
    float ss = 0.f;
#pragma unroll
    for (int j = 0; j < E; ++j) ss += x[j] * x[j];
    ss = warp_sum(ss);
    const float inv = 1.0f / sqrtf(ss / (float)hd + eps);
#pragma unroll
    for (int j = 0; j < E; ++j) x[j] = round_act<T>(x[j] * inv * wv[j]);
#pragma unroll
    for (int j = 0; j < E / 2; ++j) {
        const float x0 = x[j], x1 = x[j + E / 2];
        rope_rot<T>(x0, x1, cs[j], sn[j], x[j], x[j + E / 2]);
    }
}

} // namespace

#endif
