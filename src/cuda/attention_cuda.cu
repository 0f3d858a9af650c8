/* pl_paged_attention_cuda: shape checks, kernel choice and launch, plus the on-request
 * block-table validation (a device-to-host copy) with the messages of the CPU operator. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/attn_cuda.h"
#include "pagellm/cuda.h"

namespace {

int check_shapes(const pl_paged_attention_args *a, char *err, size_t err_len) {
    if (!a) return pl_fail(err, err_len, PL_ERR_INVALID, "args: NULL");
    if (a->dtype != PL_F32 && a->dtype != PL_BF16)
        return pl_fail(err, err_len, PL_ERR_INVALID, "dtype: %d is neither PL_F32 nor PL_BF16", (int)a->dtype);
    if (a->page_size <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "page_size: %d must be a positive integer", a->page_size);
    const struct { const char *name; int v; } dims[] = {
        {"batch", a->batch}, {"num_heads", a->num_heads}, {"num_kv_heads", a->num_kv_heads},
        {"query_len", a->query_len}, {"head_dim", a->head_dim}, {"max_pages", a->max_pages}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; ++i)
        if (dims[i].v <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: %d must be positive", dims[i].name, dims[i].v);
    if (a->num_pages <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "num_pages: %d: nonempty physical page storage required", a->num_pages);
    if (a->num_heads % a->num_kv_heads != 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "num_heads: %d is not a multiple of num_kv_heads %d", a->num_heads, a->num_kv_heads);
    if (!a->query) return pl_fail(err, err_len, PL_ERR_INVALID, "query: NULL");
    if (!a->key_pages) return pl_fail(err, err_len, PL_ERR_INVALID, "key_pages: NULL");
    if (!a->value_pages) return pl_fail(err, err_len, PL_ERR_INVALID, "value_pages: NULL");
    if (!a->block_table) return pl_fail(err, err_len, PL_ERR_INVALID, "block_table: NULL");
    if (!a->context_lens) return pl_fail(err, err_len, PL_ERR_INVALID, "context_lens: NULL");
    if (!a->out) return pl_fail(err, err_len, PL_ERR_INVALID, "out: NULL");
    if ((int)a->schedule < (int)PL_ATTN_AUTO || (int)a->schedule > (int)PL_ATTN_FLASH)
        return pl_fail(err, err_len, PL_ERR_INVALID, "schedule: %d is not a pl_attn_schedule", (int)a->schedule);
    if (!isfinite(a->scale)) return pl_fail(err, err_len, PL_ERR_INVALID, "scale: %g is not finite", (double)a->scale);
    if (a->head_dim > 256)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "head_dim: %d: the CUDA kernels support head_dim <= 256", a->head_dim);
    if (a->batch > 65535) return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "batch: %d: the CUDA kernels support batch <= 65535", a->batch);
    if (a->num_heads > 65535)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "num_heads: %d: the CUDA kernels support num_heads <= 65535", a->num_heads);
    if ((long long)a->max_pages * a->page_size > 0x7fffffffLL)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "max_pages * page_size: %lld tokens exceed the int32 positions of the CUDA kernels",
                       (long long)a->max_pages * a->page_size);
    return PL_OK;
}

bool vector_ok(pl_dtype dtype, int d) { return (dtype == PL_BF16 && (d == 128 || d == 64)) || (dtype == PL_F32 && d == 128); }

int sm_count(void) {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 132;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) return 132;
    return n;
}

} // namespace

extern "C" int pl_paged_attention_cuda_ex(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt,
                                          void *cuda_stream, char *err, size_t err_len) {
    int st = check_shapes(a, err, err_len);
    if (st != PL_OK) return st;
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
    pl_cuda_attn_options o;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;

    pl_cuda_attn_kernel kern = o.kernel;
    if (kern == PL_CUDA_ATTN_AUTO) {
        switch (a->schedule) {
        case PL_ATTN_REFERENCE:
        case PL_ATTN_SCALAR: kern = PL_CUDA_ATTN_GENERIC; break;
        case PL_ATTN_DECODE: kern = vector_ok(a->dtype, a->head_dim) ? PL_CUDA_ATTN_VECTOR : PL_CUDA_ATTN_GENERIC; break;
        case PL_ATTN_FLASH:
            if (a->dtype != PL_BF16 || a->head_dim != 128)
                return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "schedule: PL_ATTN_FLASH on CUDA needs bf16 and head_dim 128 (got %s, head_dim %d)",
                               a->dtype == PL_BF16 ? "bf16" : "f32", a->head_dim);
            kern = PL_CUDA_ATTN_MMA;
            break;
        default:
            if (a->query_len <= 8) kern = vector_ok(a->dtype, a->head_dim) ? PL_CUDA_ATTN_VECTOR : PL_CUDA_ATTN_GENERIC;
            else if (a->dtype == PL_BF16 && a->head_dim == 128) kern = PL_CUDA_ATTN_MMA;
            else kern = PL_CUDA_ATTN_GENERIC;
            break;
        }
    }
    /* 16-byte loads need 16-byte aligned arrays; the AUTO choice falls back to scalar loads */
    const bool aligned = (((uintptr_t)a->query | (uintptr_t)a->key_pages | (uintptr_t)a->value_pages | (uintptr_t)a->out) & 15u) == 0;
    if (!aligned && o.kernel == PL_CUDA_ATTN_AUTO && a->schedule != PL_ATTN_FLASH) kern = PL_CUDA_ATTN_GENERIC;
    if (!aligned && kern != PL_CUDA_ATTN_GENERIC)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "query/key_pages/value_pages/out: the vector and MMA kernels need 16-byte aligned arrays");
    if (kern == PL_CUDA_ATTN_VECTOR && !vector_ok(a->dtype, a->head_dim))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "kernel: the vector kernel has no variant for %s head_dim %d",
                       a->dtype == PL_BF16 ? "bf16" : "f32", a->head_dim);
    if (kern == PL_CUDA_ATTN_MMA && (a->dtype != PL_BF16 || a->head_dim != 128))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "kernel: the MMA kernel needs bf16 and head_dim 128 (got %s, head_dim %d)",
                       a->dtype == PL_BF16 ? "bf16" : "f32", a->head_dim);

    pl_attn_params p;
    memset(&p, 0, sizeof p);
    p.q = a->query;
    p.k = a->key_pages;
    p.v = a->value_pages;
    p.out = a->out;
    p.block_table = a->block_table;
    p.context_lens = a->context_lens;
    p.batch = a->batch;
    p.num_heads = a->num_heads;
    p.num_kv_heads = a->num_kv_heads;
    p.query_len = a->query_len;
    p.head_dim = a->head_dim;
    p.group = a->num_heads / a->num_kv_heads;
    p.page_size = a->page_size;
    p.page_shift = -1;
    if ((a->page_size & (a->page_size - 1)) == 0) {
        int s = 0;
        while ((1 << s) < a->page_size) ++s;
        p.page_shift = s;
    }
    p.max_pages = a->max_pages;
    p.num_pages = a->num_pages;
    p.causal = a->causal != 0;
    const float scale = a->scale > 0.f ? a->scale : 1.0f / sqrtf((float)a->head_dim);
    p.scale_log2 = scale * 1.4426950408889634f;
    p.splits = 1;
    p.chunk = 0;

    if (kern == PL_CUDA_ATTN_MMA) {
        int warps = o.mma_warps;
        if (warps != 4 && warps != 8) warps = 4;
        return pl_cuda_attn_mma_launch(&p, warps, stream, err, err_len);
    }

    /* split-context kernels: rows of a GQA group per CTA, splits to fill the SMs */
    const int R = p.group * p.query_len;
    const int rows = kern == PL_CUDA_ATTN_VECTOR ? (R <= 1 ? 1 : R <= 2 ? 2 : R <= 4 ? 4 : 8) : 8;
    const long long max_ctx = (long long)a->max_pages * a->page_size;
    const long long base = (long long)a->batch * a->num_kv_heads * ((R + rows - 1) / rows);
    long long splits = o.num_splits;
    if (splits <= 0) {
        const long long target = 4LL * sm_count();
        splits = (target + base - 1) / base;
        const long long by_len = (max_ctx + 127) / 128; /* at least 128 keys per split */
        if (splits > by_len) splits = by_len;
    }
    if (splits < 1) splits = 1;
    if (splits > 65535) splits = 65535;
    long long chunk = (max_ctx + splits - 1) / splits;
    chunk = (chunk + 63) / 64 * 64;
    splits = (max_ctx + chunk - 1) / chunk;
    if (splits < 1) splits = 1;
    p.splits = (int)splits;
    p.chunk = (int)chunk;

    void *ws = NULL;
    if (p.splits > 1) {
        const size_t rows_out = (size_t)a->batch * a->query_len * a->num_heads * p.splits;
        const size_t bytes = rows_out * ((size_t)a->head_dim + 2) * sizeof(float);
        cudaError_t e = cudaMallocAsync(&ws, bytes, stream);
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "attention workspace (%zu bytes): %s", bytes, cudaGetErrorString(e));
        p.part_o = static_cast<float *>(ws);
        p.part_ml = p.part_o + rows_out * a->head_dim;
    }
    st = pl_cuda_attn_split_launch(&p, a->dtype, kern == PL_CUDA_ATTN_VECTOR, rows, stream, err, err_len);
    if (ws) {
        cudaError_t e = cudaFreeAsync(ws, stream);
        if (st == PL_OK && e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "attention workspace free: %s", cudaGetErrorString(e));
    }
    return st;
}

extern "C" int pl_paged_attention_cuda(const pl_paged_attention_args *args, void *cuda_stream, char *err, size_t err_len) {
    return pl_paged_attention_cuda_ex(args, NULL, cuda_stream, err, err_len);
}

extern "C" int pl_paged_attention_cuda_validate(const pl_paged_attention_args *a, void *cuda_stream, char *err, size_t err_len) {
    int st = check_shapes(a, err, err_len);
    if (st != PL_OK) return st;
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
    const size_t nbt = (size_t)a->batch * a->max_pages;
    int32_t *bt = static_cast<int32_t *>(malloc(nbt * sizeof(int32_t)));
    int32_t *ctx = static_cast<int32_t *>(malloc((size_t)a->batch * sizeof(int32_t)));
    unsigned char *seen = static_cast<unsigned char *>(calloc((size_t)a->num_pages, 1));
    if (!bt || !ctx || !seen) {
        free(bt);
        free(ctx);
        free(seen);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_paged_attention_cuda_validate: out of host memory");
    }
    cudaError_t e = cudaMemcpyAsync(bt, a->block_table, nbt * sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(ctx, a->context_lens, (size_t)a->batch * sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        st = pl_fail(err, err_len, PL_ERR_CUDA, "block_table/context_lens copy to host: %s", cudaGetErrorString(e));
        goto done;
    }
    for (int b = 0; b < a->batch && st == PL_OK; ++b) {
        const int c = ctx[b];
        if (c < 0) {
            st = pl_fail(err, err_len, PL_ERR_INVALID, "context_lens[%d]: %d must be nonnegative", b, c);
            break;
        }
        const long long live = ((long long)c + a->page_size - 1) / a->page_size;
        if (live > a->max_pages) {
            st = pl_fail(err, err_len, PL_ERR_INVALID, "context_lens[%d]: %d tokens need %lld pages and are not covered by block_table (max_pages %d)",
                         b, c, live, a->max_pages);
            break;
        }
        for (int i = 0; i < a->max_pages; ++i) {
            const int32_t id = bt[(size_t)b * a->max_pages + i];
            if (i < live) {
                if (id < 0 || id >= a->num_pages) {
                    st = pl_fail(err, err_len, PL_ERR_INVALID, "block_table[%d][%d]: page id %d is outside physical page storage (num_pages %d)",
                                 b, i, (int)id, a->num_pages);
                    break;
                }
                if (seen[id]) {
                    st = pl_fail(err, err_len, PL_ERR_INVALID, "block_table[%d][%d]: page id %d is aliased (used twice)", b, i, (int)id);
                    break;
                }
                seen[id] = 1;
            } else if (id != -1) {
                st = pl_fail(err, err_len, PL_ERR_INVALID, "block_table[%d][%d]: %d past the live pages must use the -1 sentinel", b, i, (int)id);
                break;
            }
        }
        if (st == PL_OK && c > 0 && c < a->query_len)
            st = pl_fail(err, err_len, PL_ERR_INVALID, "context_lens[%d]: %d must be zero or at least query length %d", b, c, a->query_len);
    }
done:
    free(bt);
    free(ctx);
    free(seen);
    return st;
}
