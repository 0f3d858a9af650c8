/* One launch appends the K/V rows of a whole batch step into their pages: block (t, h)
 * copies head h of token t to slot slots[t] of page page_ids[t], 16 bytes per thread when
 * every row and pointer is 16-byte aligned, one element per thread otherwise. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda/ptx.cuh"
#include "pagellm/cuda.h"

namespace {

template <typename W>
__global__ void kv_append_kernel(int num_kv_heads, int words_per_head, int page_size, int num_pages,
                                 const W *k, const W *v, size_t token_stride_w, const int32_t *page_ids,
                                 const int32_t *slots, W *kp, W *vp) {
    pdl_trigger(); /* launched with PDL: wait for the kernel that wrote the rows (and may read the pages) */
    pdl_wait();
    const int t = blockIdx.x, h = blockIdx.y;
    const int32_t page = page_ids[t];
    const int32_t slot = slots[t];
    if (page < 0 || page >= num_pages || slot < 0 || slot >= page_size) return;
    const W *ks = k + (size_t)t * token_stride_w + (size_t)h * words_per_head;
    const W *vs = v + (size_t)t * token_stride_w + (size_t)h * words_per_head;
    const size_t dst = (((size_t)page * num_kv_heads + h) * page_size + slot) * words_per_head;
    for (int i = threadIdx.x; i < words_per_head; i += blockDim.x) {
        kp[dst + i] = ks[i];
        vp[dst + i] = vs[i];
    }
}

} // namespace

extern "C" int pl_kv_append_cuda(pl_dtype dtype, int num_tokens, int num_kv_heads, int head_dim, int page_size,
                                 int num_pages, const void *k, const void *v, size_t token_stride,
                                 const int32_t *page_ids, const int32_t *slots, void *key_pages,
                                 void *value_pages, void *cuda_stream, char *err, size_t err_len) {
    if (dtype != PL_F32 && dtype != PL_BF16) return pl_fail(err, err_len, PL_ERR_INVALID, "dtype: %d is neither PL_F32 nor PL_BF16", (int)dtype);
    if (num_tokens < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "num_tokens: %d must be nonnegative", num_tokens);
    if (num_kv_heads <= 0 || num_kv_heads > 65535) return pl_fail(err, err_len, PL_ERR_INVALID, "num_kv_heads: %d must be in [1, 65535]", num_kv_heads);
    if (head_dim <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "head_dim: %d must be positive", head_dim);
    if (page_size <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "page_size: %d must be a positive integer", page_size);
    if (num_pages <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "num_pages: %d must be positive", num_pages);
    if (num_tokens == 0) return PL_OK;
    if (!k || !v || !page_ids || !slots || !key_pages || !value_pages)
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: NULL", !k ? "k" : !v ? "v" : !page_ids ? "page_ids" : !slots ? "slots" : !key_pages ? "key_pages" : "value_pages");
    const size_t es = dtype == PL_BF16 ? 2 : 4;
    const size_t stride = token_stride ? token_stride : (size_t)num_kv_heads * head_dim;
    if (stride < (size_t)num_kv_heads * head_dim)
        return pl_fail(err, err_len, PL_ERR_INVALID, "token_stride: %zu is below num_kv_heads * head_dim = %d", stride, num_kv_heads * head_dim);
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
    dim3 grid((unsigned)num_tokens, (unsigned)num_kv_heads);
    const size_t row_bytes = (size_t)head_dim * es;
    const bool wide = row_bytes % 16 == 0 && (stride * es) % 16 == 0 && ((uintptr_t)k | (uintptr_t)v | (uintptr_t)key_pages | (uintptr_t)value_pages) % 16 == 0;
    if (wide) {
        const int words = (int)(row_bytes / 16);
        launch_pdl(kv_append_kernel<uint4>, grid, dim3(words < 128 ? (words + 31) / 32 * 32 : 128), 0, stream, 1, num_kv_heads,
                   words, page_size, num_pages, static_cast<const uint4 *>(k), static_cast<const uint4 *>(v), stride * es / 16,
                   page_ids, slots, static_cast<uint4 *>(key_pages), static_cast<uint4 *>(value_pages));
    } else if (es == 2) {
        launch_pdl(kv_append_kernel<uint16_t>, grid, dim3(128), 0, stream, 1, num_kv_heads, head_dim, page_size, num_pages,
                   static_cast<const uint16_t *>(k), static_cast<const uint16_t *>(v), stride, page_ids, slots,
                   static_cast<uint16_t *>(key_pages), static_cast<uint16_t *>(value_pages));
    } else {
        launch_pdl(kv_append_kernel<float>, grid, dim3(128), 0, stream, 1, num_kv_heads, head_dim, page_size, num_pages,
                   static_cast<const float *>(k), static_cast<const float *>(v), stride, page_ids, slots,
                   static_cast<float *>(key_pages), static_cast<float *>(value_pages));
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "kv append kernel launch: %s", cudaGetErrorString(e));
    return PL_OK;
}
