/* The device side of the dense and paged-gather KV modes (see kv_modes_cuda.h): a
 * stream-ordered memory pool, a pinned metadata arena, copy kernels (dense concatenation,
 * padded-batch staging from dense caches or pages, masks) and the readable attention.
 *
 * The attention is the control, not a fast path: one block per (batch row, query, query
 * head); the query widened to f32 in shared memory; keys in tiles of ATT_TILE whose scores
 * (one thread per key, a plain dot product) sit in shared memory; softmax in f32 with the
 * running max / sum carried across tiles (one tile, an exact two-pass softmax, whenever
 * S <= ATT_TILE); then out[d] = sum_s p[s] v[s][d], one thread per output element. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "cuda/elem.cuh"
#include "cuda/kv_modes_cuda.h"
#include "pagellm/cuda.h"

struct pl_kvc {
    cudaStream_t stream = nullptr;
    cudaMemPool_t pool = nullptr; /* nullptr: the device has no memory pools, plain cudaMalloc */
    void *scratch[PL_KVC_NUM_SCRATCH] = {};
    size_t scratch_cap[PL_KVC_NUM_SCRATCH] = {};
    char *arena_host = nullptr, *arena_dev = nullptr; /* pinned metadata and its device twin */
    size_t arena_cap = 0, arena_head = 0;
};

namespace {

int cuda_fail(char *err, size_t err_len, cudaError_t e, const char *what) {
    cudaGetLastError(); /* clear a non-sticky error */
    return pl_fail(err, err_len, e == cudaErrorMemoryAllocation ? PL_ERR_NOMEM : PL_ERR_CUDA, "%s: CUDA error: %s", what,
                   cudaGetErrorString(e));
}

int check_launch(char *err, size_t err_len, const char *what) {
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? PL_OK : cuda_fail(err, err_len, e, what);
}

/* Room for bytes of metadata: a host slice of the pinned arena and its device twin. Slices
 * go one after another; when the arena is full the stream is drained once (every earlier
 * upload has been consumed) and it starts over. */
int arena_take(pl_kvc *c, size_t bytes, char **host, char **dev, char *err, size_t err_len) {
    const size_t need = (bytes + 255) / 256 * 256;
    cudaError_t e;
    if (need > c->arena_cap) {
        if ((e = cudaStreamSynchronize(c->stream)) != cudaSuccess) return cuda_fail(err, err_len, e, "kv modes: stream");
        size_t cap = 2 * need < ((size_t)256 << 10) ? ((size_t)256 << 10) : 2 * need;
        char *h = nullptr, *d = nullptr;
        if ((e = cudaMallocHost(&h, cap)) != cudaSuccess) return cuda_fail(err, err_len, e, "kv modes: pinned arena");
        if ((e = cudaMalloc(&d, cap)) != cudaSuccess) {
            cudaFreeHost(h);
            return cuda_fail(err, err_len, e, "kv modes: device arena");
        }
        if (c->arena_host) cudaFreeHost(c->arena_host);
        if (c->arena_dev) cudaFree(c->arena_dev);
        c->arena_host = h;
        c->arena_dev = d;
        c->arena_cap = cap;
        c->arena_head = 0;
    } else if (c->arena_head + need > c->arena_cap) {
        if ((e = cudaStreamSynchronize(c->stream)) != cudaSuccess) return cuda_fail(err, err_len, e, "kv modes: stream");
        c->arena_head = 0;
    }
    *host = c->arena_host + c->arena_head;
    *dev = c->arena_dev + c->arena_head;
    c->arena_head += need;
    return PL_OK;
}

int arena_send(pl_kvc *c, const char *host, char *dev, size_t bytes, char *err, size_t err_len) {
    cudaError_t e = cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, c->stream);
    return e == cudaSuccess ? PL_OK : cuda_fail(err, err_len, e, "kv modes: metadata upload");
}

/* The widest copy word (16, 4 or 2 bytes) that divides every size and address given. */
int word_bytes(uintptr_t all) { return all % 16 == 0 ? 16 : all % 4 == 0 ? 4 : 2; }

/* tof, fromf: elem.cuh */

/* ---- copies ---- */

constexpr int COPY_THREADS = 256, COPY_TOKENS = 16; /* token rows per block */

/* new[h][t] = t < old ? old[h][t] : the appended row t - old (token-major source). */
template <typename W>
__global__ void dense_append_kernel(int old, int n, int wpr, const W *ok, const W *ov, const W *k, const W *v,
                                    size_t stride_w, W *nk, W *nv) {
    const int h = blockIdx.y, len = old + n, t0 = blockIdx.x * COPY_TOKENS;
    for (int i = threadIdx.x; i < COPY_TOKENS * wpr; i += blockDim.x) {
        const int t = t0 + i / wpr, w = i % wpr;
        if (t >= len) break;
        const size_t dst = ((size_t)h * len + t) * wpr + w;
        if (t < old) {
            const size_t src = ((size_t)h * old + t) * wpr + w;
            nk[dst] = ok[src];
            nv[dst] = ov[src];
        } else {
            const size_t src = (size_t)(t - old) * stride_w + (size_t)h * wpr + w;
            nk[dst] = k[src];
            nv[dst] = v[src];
        }
    }
}

struct dev_row {
    const void *k, *v; /* dense source [H, ctx, D]; nullptr: pages */
    int ctx, pad, bt, unused;
};

/* Block (token tile, head h, row c) of the padded batch [rows, H, S, D]. */
template <typename W>
__global__ void stage_kernel(const dev_row *rows, const int32_t *bt, int H, int S, int wpr, const W *kp, const W *vp,
                             int page_size, W *dk, W *dv, float *mask) {
    const int c = blockIdx.z, h = blockIdx.y, s0 = blockIdx.x * COPY_TOKENS;
    const dev_row r = rows[c];
    W *ok = dk + ((size_t)c * H + h) * S * wpr, *ov = dv + ((size_t)c * H + h) * S * wpr;
    for (int i = threadIdx.x; i < COPY_TOKENS * wpr; i += blockDim.x) {
        const int s = s0 + i / wpr, w = i % wpr, t = s - r.pad;
        if (s >= S) break;
        const size_t dst = (size_t)s * wpr + w;
        if (t < 0) { /* left padding */
            ok[dst] = W{};
            ov[dst] = W{};
        } else if (t < r.ctx) {
            size_t src;
            const W *sk, *sv;
            if (r.k) {
                src = ((size_t)h * r.ctx + t) * wpr + w;
                sk = static_cast<const W *>(r.k);
                sv = static_cast<const W *>(r.v);
            } else {
                const int32_t page = bt[r.bt + t / page_size];
                src = (((size_t)page * H + h) * page_size + t % page_size) * wpr + w;
                sk = kp;
                sv = vp;
            }
            ok[dst] = sk[src];
            ov[dst] = sv[src];
        }
    }
    if (mask && h == 0)
        for (int j = threadIdx.x; j < COPY_TOKENS && s0 + j < S; j += blockDim.x)
            mask[(size_t)c * S + s0 + j] = s0 + j < r.pad ? -INFINITY : 0.0f;
}

__global__ void causal_mask_kernel(int n, int S, float *mask) {
    const size_t total = (size_t)n * S;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const int j = (int)(i / S), s = (int)(i % S);
        mask[i] = s <= S - n + j ? 0.0f : -INFINITY;
    }
}

unsigned grid_for(size_t n, int threads) {
    size_t g = (n + threads - 1) / threads;
    if (g > 132 * 16) g = 132 * 16;
    return g ? (unsigned)g : 1u;
}

/* ---- readable attention ---- */

constexpr int ATT_THREADS = 256, ATT_TILE = 2048, ATT_MAX_D = 256;

/* Max / sum over the block; every thread gets it. red: 32 floats of shared memory. */
__device__ float block_max(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads(); /* red may still be read by a previous reduction */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float t = lane < nw ? red[lane] : -INFINITY;
    for (int o = 16; o > 0; o >>= 1) t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, o));
    return t;
}

__device__ float block_sum(float v, float *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float t = lane < nw ? red[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
}

/* q (f32, shared) . one key row, d in order; 16-byte loads when the row allows. */
__device__ __forceinline__ float dot_row(const float *qs, const float *kr, int D) {
    float acc = 0.0f;
    if ((D & 3) == 0 && (reinterpret_cast<uintptr_t>(kr) & 15) == 0) {
        const float4 *k4 = reinterpret_cast<const float4 *>(kr);
        for (int i = 0; i < D / 4; i++) {
            const float4 x = k4[i];
            acc = fmaf(qs[4 * i], x.x, acc);
            acc = fmaf(qs[4 * i + 1], x.y, acc);
            acc = fmaf(qs[4 * i + 2], x.z, acc);
            acc = fmaf(qs[4 * i + 3], x.w, acc);
        }
        return acc;
    }
    for (int d = 0; d < D; d++) acc = fmaf(qs[d], kr[d], acc);
    return acc;
}

__device__ __forceinline__ float dot_row(const float *qs, const __nv_bfloat16 *kr, int D) {
    float acc = 0.0f;
    if ((D & 7) == 0 && (reinterpret_cast<uintptr_t>(kr) & 15) == 0) {
        const uint4 *k4 = reinterpret_cast<const uint4 *>(kr);
        for (int i = 0; i < D / 8; i++) {
            const uint4 w = k4[i];
            const __nv_bfloat162 *p = reinterpret_cast<const __nv_bfloat162 *>(&w);
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float2 x = __bfloat1622float2(p[j]);
                acc = fmaf(qs[8 * i + 2 * j], x.x, acc);
                acc = fmaf(qs[8 * i + 2 * j + 1], x.y, acc);
            }
        }
        return acc;
    }
    for (int d = 0; d < D; d++) acc = fmaf(qs[d], tof(kr[d]), acc);
    return acc;
}

/* Block (l * Hq + h, b): query l of batch row b, query head h of KV head h / (Hq / Hkv). */
template <typename T>
__global__ void __launch_bounds__(ATT_THREADS)
    readable_attention_kernel(int L, int S, int Hq, int Hkv, int D, float scale, const T *q, size_t q_stride,
                              const T *k, const T *v, const float *mask, T *out) {
    __shared__ float qs[ATT_MAX_D];
    __shared__ float sc[ATT_TILE];
    __shared__ float red[32];
    __shared__ float part[ATT_THREADS];
    const int b = blockIdx.y, l = blockIdx.x / Hq, h = blockIdx.x % Hq, g = h / (Hq / Hkv), tid = threadIdx.x;
    const size_t tok = (size_t)b * L + l;
    for (int d = tid; d < D; d += blockDim.x) qs[d] = tof(q[tok * q_stride + (size_t)h * D + d]);
    const T *kb = k + ((size_t)b * Hkv + g) * S * D, *vb = v + ((size_t)b * Hkv + g) * S * D;
    const float *mrow = mask + tok * S;
    /* the output phase: groups of D threads, each thread one element d of a partial sum over
     * every groups-th key of the tile */
    const int groups = blockDim.x / D, grp = tid / D, dim = tid % D;
    float m = -INFINITY, lsum = 0.0f, acc = 0.0f;
    __syncthreads(); /* qs complete */
    for (int t0 = 0; t0 < S; t0 += ATT_TILE) {
        const int n = S - t0 < ATT_TILE ? S - t0 : ATT_TILE;
        float tmax = -INFINITY;
        for (int j = tid; j < n; j += blockDim.x) {
            const int s = t0 + j;
            const float ms = mrow[s];
            float x = -INFINITY; /* masked: skipped */
            if (ms != -INFINITY) x = dot_row(qs, kb + (size_t)s * D, D) * scale + ms;
            sc[j] = x;
            tmax = fmaxf(tmax, x);
        }
        tmax = block_max(tmax, red);
        const float m_new = fmaxf(m, tmax);
        if (m_new == -INFINITY) continue; /* every key so far masked (the same in all threads) */
        float tsum = 0.0f;
        for (int j = tid; j < n; j += blockDim.x) {
            const float p = expf(sc[j] - m_new); /* masked: exp(-inf) = 0 */
            sc[j] = p;
            tsum += p;
        }
        tsum = block_sum(tsum, red); /* also a barrier: sc holds p */
        const float alpha = expf(m - m_new); /* rescales what earlier tiles summed (0 for the first) */
        lsum = lsum * alpha + tsum;
        acc *= alpha;
        if (grp < groups) {
#pragma unroll 4
            for (int j = grp; j < n; j += groups) {
                const float p = sc[j];
                if (p != 0.0f) acc = fmaf(p, tof(vb[(size_t)(t0 + j) * D + dim]), acc);
            }
        }
        m = m_new;
        __syncthreads(); /* sc read before the next tile writes it */
    }
    part[tid] = acc;
    __syncthreads();
    if (tid < D) {
        float o = 0.0f;
        for (int gi = 0; gi < groups; gi++) o += part[gi * D + tid];
        out[tok * (size_t)Hq * D + (size_t)h * D + tid] = fromf<T>(lsum > 0.0f ? o / lsum : 0.0f);
    }
}

} // namespace

extern "C" {

int pl_kvc_create(void *cuda_stream, pl_kvc **out, char *err, size_t err_len) {
    if (!out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_kvc_create: out is NULL");
    *out = nullptr;
    pl_kvc *c = new (std::nothrow) pl_kvc();
    if (!c) return pl_fail(err, err_len, PL_ERR_NOMEM, "kv modes: out of memory");
    c->stream = static_cast<cudaStream_t>(cuda_stream);
    int dev = 0, pools = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev);
    if (e != cudaSuccess) {
        delete c;
        return cuda_fail(err, err_len, e, "kv modes: device query");
    }
    if (pools) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        if ((e = cudaMemPoolCreate(&c->pool, &props)) != cudaSuccess) {
            delete c;
            return cuda_fail(err, err_len, e, "kv modes: cudaMemPoolCreate");
        }
        /* keep freed memory for the next append instead of returning it at every sync */
        uint64_t keep = UINT64_MAX;
        if ((e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &keep)) != cudaSuccess) {
            cudaMemPoolDestroy(c->pool);
            delete c;
            return cuda_fail(err, err_len, e, "kv modes: memory pool release threshold");
        }
    }
    *out = c;
    return PL_OK;
}

void pl_kvc_destroy(pl_kvc *c) {
    if (!c) return;
    for (int i = 0; i < PL_KVC_NUM_SCRATCH; i++) pl_kvc_free(c, c->scratch[i]);
    cudaStreamSynchronize(c->stream);
    if (c->arena_host) cudaFreeHost(c->arena_host);
    if (c->arena_dev) cudaFree(c->arena_dev);
    if (c->pool) cudaMemPoolDestroy(c->pool);
    cudaGetLastError();
    delete c;
}

int pl_kvc_alloc(pl_kvc *c, size_t bytes, void **out, char *err, size_t err_len) {
    *out = nullptr;
    if (bytes == 0) bytes = 16;
    cudaError_t e = c->pool ? cudaMallocFromPoolAsync(out, bytes, c->pool, c->stream) : cudaMalloc(out, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *out = nullptr;
        return pl_fail(err, err_len, e == cudaErrorMemoryAllocation ? PL_ERR_NOMEM : PL_ERR_CUDA,
                       "kv modes: %zu bytes of device memory: %s", bytes, cudaGetErrorString(e));
    }
    return PL_OK;
}

void pl_kvc_free(pl_kvc *c, void *p) {
    if (!p) return;
    if (c->pool) {
        cudaFreeAsync(p, c->stream);
    } else {
        cudaStreamSynchronize(c->stream);
        cudaFree(p);
    }
    cudaGetLastError(); /* a failed free has nothing to report to */
}

int pl_kvc_scratch(pl_kvc *c, int slot, size_t bytes, void **out, char *err, size_t err_len) {
    *out = nullptr;
    if (slot < 0 || slot >= PL_KVC_NUM_SCRATCH) return pl_fail(err, err_len, PL_ERR_INVALID, "kv modes: scratch slot %d", slot);
    if (c->scratch[slot] && c->scratch_cap[slot] >= bytes) {
        *out = c->scratch[slot];
        return PL_OK;
    }
    size_t n = bytes < 4096 ? 4096 : bytes;
    if (n < c->scratch_cap[slot] + c->scratch_cap[slot] / 2) n = c->scratch_cap[slot] + c->scratch_cap[slot] / 2;
    void *p = nullptr;
    int rc = pl_kvc_alloc(c, n, &p, err, err_len);
    if (rc) return rc;
    pl_kvc_free(c, c->scratch[slot]); /* stream-ordered: work already enqueued still reads it */
    c->scratch[slot] = p;
    c->scratch_cap[slot] = n;
    *out = p;
    return PL_OK;
}

int pl_kvc_dense_append(pl_kvc *c, size_t elem, int H, int D, int old, int n, const void *old_k, const void *old_v,
                        const void *k, const void *v, size_t token_stride, void *new_k, void *new_v, char *err,
                        size_t err_len) {
    if (H <= 0 || H > 65535 || D <= 0 || old < 0 || n <= 0 || (old > 0 && (!old_k || !old_v)))
        return pl_fail(err, err_len, PL_ERR_INVALID, "dense append: H %d, D %d, old %d, n %d", H, D, old, n);
    const size_t row = (size_t)D * elem;
    const int wb = word_bytes(row | (token_stride * elem) | reinterpret_cast<uintptr_t>(k) | reinterpret_cast<uintptr_t>(v) |
                              reinterpret_cast<uintptr_t>(old_k) | reinterpret_cast<uintptr_t>(old_v) |
                              reinterpret_cast<uintptr_t>(new_k) | reinterpret_cast<uintptr_t>(new_v));
    const int wpr = (int)(row / wb);
    const size_t stride_w = token_stride * elem / wb;
    dim3 grid((unsigned)((old + n + COPY_TOKENS - 1) / COPY_TOKENS), (unsigned)H);
#define PL_KVC_APPEND(W)                                                                                               \
    dense_append_kernel<W><<<grid, COPY_THREADS, 0, c->stream>>>(                                                     \
        old, n, wpr, static_cast<const W *>(old_k), static_cast<const W *>(old_v), static_cast<const W *>(k),         \
        static_cast<const W *>(v), stride_w, static_cast<W *>(new_k), static_cast<W *>(new_v))
    if (wb == 16)
        PL_KVC_APPEND(uint4);
    else if (wb == 4)
        PL_KVC_APPEND(uint32_t);
    else
        PL_KVC_APPEND(uint16_t);
#undef PL_KVC_APPEND
    return check_launch(err, err_len, "dense append kernel");
}

int pl_kvc_page_append(pl_kvc *c, pl_dtype dtype, int n, int H, int D, int page_size, int capacity_pages,
                       const void *k, const void *v, size_t token_stride, const int32_t *page_ids, const int32_t *slots,
                       void *key_pages, void *value_pages, char *err, size_t err_len) {
    if (n <= 0) return PL_OK;
    const size_t bytes = sizeof(int32_t) * 2 * (size_t)n;
    char *h = nullptr, *d = nullptr;
    int rc = arena_take(c, bytes, &h, &d, err, err_len);
    if (rc) return rc;
    memcpy(h, page_ids, sizeof(int32_t) * (size_t)n);
    memcpy(h + sizeof(int32_t) * (size_t)n, slots, sizeof(int32_t) * (size_t)n);
    if ((rc = arena_send(c, h, d, bytes, err, err_len))) return rc;
    const int32_t *dids = reinterpret_cast<const int32_t *>(d);
    return pl_kv_append_cuda(dtype, n, H, D, page_size, capacity_pages, k, v, token_stride, dids, dids + n, key_pages,
                             value_pages, c->stream, err, err_len);
}

int pl_kvc_stage(pl_kvc *c, size_t elem, int nrows, int H, int D, int S, const pl_kvc_stage_row *rows,
                 const void *key_pages, const void *value_pages, int page_size, void *dst_k, void *dst_v, float *mask,
                 char *err, size_t err_len) {
    if (nrows <= 0 || nrows > 65535 || H <= 0 || H > 65535 || D <= 0 || S <= 0 || !rows)
        return pl_fail(err, err_len, PL_ERR_INVALID, "stage: rows %d, H %d, D %d, S %d", nrows, H, D, S);
    size_t bt_len = 0;
    uintptr_t all = (size_t)D * elem | reinterpret_cast<uintptr_t>(dst_k) | reinterpret_cast<uintptr_t>(dst_v) |
                    reinterpret_cast<uintptr_t>(key_pages) | reinterpret_cast<uintptr_t>(value_pages);
    for (int i = 0; i < nrows; i++) {
        const pl_kvc_stage_row *r = &rows[i];
        if (r->ctx < 0 || r->pad < 0 || r->pad + r->ctx > S)
            return pl_fail(err, err_len, PL_ERR_INVALID, "stage: row %d: ctx %d at pad %d in S %d", i, r->ctx, r->pad, S);
        if (r->k) {
            all |= reinterpret_cast<uintptr_t>(r->k) | reinterpret_cast<uintptr_t>(r->v);
        } else if (r->ctx > 0) {
            if (!r->pages || !key_pages || !value_pages || page_size <= 0)
                return pl_fail(err, err_len, PL_ERR_INVALID, "stage: row %d reads pages, but pages/pool/page_size missing", i);
            bt_len += (size_t)(r->ctx + page_size - 1) / page_size;
        }
    }
    const size_t meta = sizeof(dev_row) * (size_t)nrows, bytes = meta + sizeof(int32_t) * bt_len;
    char *h = nullptr, *d = nullptr;
    int rc = arena_take(c, bytes, &h, &d, err, err_len);
    if (rc) return rc;
    dev_row *hr = reinterpret_cast<dev_row *>(h);
    int32_t *hbt = reinterpret_cast<int32_t *>(h + meta);
    size_t at = 0;
    for (int i = 0; i < nrows; i++) {
        const pl_kvc_stage_row *r = &rows[i];
        hr[i] = dev_row{r->k, r->v, r->ctx, r->pad, (int)at, 0};
        if (!r->k && r->ctx > 0) {
            const int np = (r->ctx + page_size - 1) / page_size;
            memcpy(hbt + at, r->pages, sizeof(int32_t) * (size_t)np);
            at += (size_t)np;
        }
    }
    if ((rc = arena_send(c, h, d, bytes, err, err_len))) return rc;
    const dev_row *drows = reinterpret_cast<const dev_row *>(d);
    const int32_t *dbt = reinterpret_cast<const int32_t *>(d + meta);
    const int wb = word_bytes(all), wpr = (int)((size_t)D * elem / wb);
    dim3 grid((unsigned)((S + COPY_TOKENS - 1) / COPY_TOKENS), (unsigned)H, (unsigned)nrows);
#define PL_KVC_STAGE(W)                                                                                                 \
    stage_kernel<W><<<grid, COPY_THREADS, 0, c->stream>>>(drows, dbt, H, S, wpr, static_cast<const W *>(key_pages),   \
                                                         static_cast<const W *>(value_pages), page_size,              \
                                                         static_cast<W *>(dst_k), static_cast<W *>(dst_v), mask)
    if (wb == 16)
        PL_KVC_STAGE(uint4);
    else if (wb == 4)
        PL_KVC_STAGE(uint32_t);
    else
        PL_KVC_STAGE(uint16_t);
#undef PL_KVC_STAGE
    return check_launch(err, err_len, "stage kernel");
}

int pl_kvc_causal_mask(pl_kvc *c, int n, int S, float *mask, char *err, size_t err_len) {
    if (n <= 0 || S < n || !mask) return pl_fail(err, err_len, PL_ERR_INVALID, "causal mask: n %d, S %d", n, S);
    causal_mask_kernel<<<grid_for((size_t)n * S, 256), 256, 0, c->stream>>>(n, S, mask);
    return check_launch(err, err_len, "causal mask kernel");
}

int pl_kvc_copy_rows(pl_kvc *c, void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t width,
                     int rows, char *err, size_t err_len) {
    if (rows <= 0 || width == 0) return PL_OK;
    cudaError_t e = cudaMemcpy2DAsync(dst, dst_stride, src, src_stride, width, (size_t)rows, cudaMemcpyDeviceToDevice,
                                      c->stream);
    return e == cudaSuccess ? PL_OK : cuda_fail(err, err_len, e, "kv modes: row copy");
}

int pl_kvc_attention(pl_kvc *c, pl_dtype dtype, int rows, int L, int S, int Hq, int Hkv, int D, float scale,
                     const void *q, size_t token_stride, const void *k, const void *v, const float *mask, void *out,
                     char *err, size_t err_len) {
    if (dtype != PL_BF16 && dtype != PL_F32)
        return pl_fail(err, err_len, PL_ERR_INVALID, "readable attention: dtype %d", (int)dtype);
    if (rows <= 0 || rows > 65535 || L <= 0 || S <= 0 || Hq <= 0 || Hkv <= 0 || Hq % Hkv || D <= 0 ||
        (long long)L * Hq > 0x7fffffffLL)
        return pl_fail(err, err_len, PL_ERR_INVALID, "readable attention: rows %d, L %d, S %d, Hq %d, Hkv %d, D %d", rows,
                       L, S, Hq, Hkv, D);
    if (D > ATT_MAX_D)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "readable attention: head_dim %d above %d", D, ATT_MAX_D);
    if (!q || !k || !v || !mask || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "readable attention: NULL buffer");
    if (!(scale > 0)) scale = 1.0f / sqrtf((float)D);
    dim3 grid((unsigned)(L * Hq), (unsigned)rows);
    if (dtype == PL_BF16)
        readable_attention_kernel<__nv_bfloat16><<<grid, ATT_THREADS, 0, c->stream>>>(
            L, S, Hq, Hkv, D, scale, static_cast<const __nv_bfloat16 *>(q), token_stride,
            static_cast<const __nv_bfloat16 *>(k), static_cast<const __nv_bfloat16 *>(v), mask,
            static_cast<__nv_bfloat16 *>(out));
    else
        readable_attention_kernel<float><<<grid, ATT_THREADS, 0, c->stream>>>(
            L, S, Hq, Hkv, D, scale, static_cast<const float *>(q), token_stride, static_cast<const float *>(k),
            static_cast<const float *>(v), mask, static_cast<float *>(out));
    return check_launch(err, err_len, "readable attention kernel");
}

} // extern "C"
