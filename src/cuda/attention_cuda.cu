/* pl_paged_attention_cuda: shape checks, kernel choice and launch, plus the on-request
 * block-table validation (a device-to-host copy) with the messages of the CPU operator. */
#include <cuda_runtime.h>
#include <limits.h>
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

pl_cuda_attn_kernel decode_kernel(pl_dtype dtype, int d) {
    if (dtype == PL_BF16 && d == 128) return PL_CUDA_ATTN_DECODE_MMA;
    return vector_ok(dtype, d) ? PL_CUDA_ATTN_VECTOR : PL_CUDA_ATTN_GENERIC;
}

int sm_count(void) {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 132;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) return 132;
    return n;
}

} // namespace

/* Kernel choice and launch parameters; shapes only (graph-capture safe). */
static int plan(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt, pl_cuda_attn_kernel *kern_out, pl_attn_params *pp,
                int *rows_out, char *err, size_t err_len) {
    int st = check_shapes(a, err, err_len);
    if (st != PL_OK) return st;
    pl_cuda_attn_options o;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;

    pl_cuda_attn_kernel kern = o.kernel;
    if (kern == PL_CUDA_ATTN_AUTO) {
        switch (a->schedule) {
        case PL_ATTN_REFERENCE:
        case PL_ATTN_SCALAR: kern = PL_CUDA_ATTN_GENERIC; break;
        case PL_ATTN_DECODE:
            if (a->query_len > 8) /* as the CPU operator: the decode schedule is for short queries */
                return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "schedule: PL_ATTN_DECODE takes query_len <= 8, got %d", a->query_len);
            kern = decode_kernel(a->dtype, a->head_dim);
            break;
        case PL_ATTN_FLASH: /* tensor cores where they apply, else the generic kernel */
            kern = a->dtype == PL_BF16 && a->head_dim == 128 ? PL_CUDA_ATTN_MMA : PL_CUDA_ATTN_GENERIC;
            break;
        default:
            if (a->query_len <= 8) kern = decode_kernel(a->dtype, a->head_dim);
            else if (a->dtype == PL_BF16 && a->head_dim == 128) kern = PL_CUDA_ATTN_MMA;
            else kern = PL_CUDA_ATTN_GENERIC;
            break;
        }
    }
    /* 16-byte loads need 16-byte aligned arrays; the AUTO choice falls back to scalar loads */
    const bool aligned = (((uintptr_t)a->query | (uintptr_t)a->key_pages | (uintptr_t)a->value_pages | (uintptr_t)a->out) & 15u) == 0;
    if (!aligned && o.kernel == PL_CUDA_ATTN_AUTO) kern = PL_CUDA_ATTN_GENERIC;
    if (!aligned && kern != PL_CUDA_ATTN_GENERIC)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "query/key_pages/value_pages/out: the vector and MMA kernels need 16-byte aligned arrays");
    if (kern == PL_CUDA_ATTN_VECTOR && !vector_ok(a->dtype, a->head_dim))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "kernel: the vector kernel has no variant for %s head_dim %d",
                       a->dtype == PL_BF16 ? "bf16" : "f32", a->head_dim);
    if ((kern == PL_CUDA_ATTN_MMA || kern == PL_CUDA_ATTN_DECODE_MMA) && (a->dtype != PL_BF16 || a->head_dim != 128))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "kernel: the MMA kernels need bf16 and head_dim 128 (got %s, head_dim %d)",
                       a->dtype == PL_BF16 ? "bf16" : "f32", a->head_dim);

    if (kern == PL_CUDA_ATTN_DECODE_MMA && o.decode_copy == 2 && a->page_size % 16 != 0)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "decode_copy: TMA copies need page_size %% 16 == 0, got %d", a->page_size);

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
        int sh = 0;
        while ((1 << sh) < a->page_size) ++sh;
        p.page_shift = sh;
    }
    p.max_pages = a->max_pages;
    p.num_pages = a->num_pages;
    p.causal = a->causal != 0;
    const float scale = a->scale > 0.f ? a->scale : 1.0f / sqrtf((float)a->head_dim);
    p.scale_log2 = scale * 1.4426950408889634f;
    p.splits = 1;
    p.chunk = 0;
    p.pdl = !(opt && opt->no_pdl);
    int rows = 0;
    if (kern == PL_CUDA_ATTN_MMA) {
        /* MMA shape: 4 or 8 warps of 16 query rows, or 32 = 4 warps of 32 rows */
        const int m = o.mma_warps;
        if (m == 4 || m == 8 || m == 32 || m == 104 || m == 108 || m == 132) {
            rows = m;
        } else {
            /* 4 warps x 32 rows with split K/V waits (measured best from 512 CTAs up), unless
             * that leaves SMs short of two CTAs; then 64-row blocks (twice the CTAs) */
            const long long ctas = (long long)((a->query_len + 127) / 128) * a->num_heads * a->batch;
            rows = ctas < 2LL * sm_count() ? 4 : 132;
        }
    } else {
        /* split-context kernels: rows of a GQA group per CTA, splits to fill the SMs */
        const int R = p.group * p.query_len;
        rows = kern == PL_CUDA_ATTN_DECODE_MMA ? 16 : kern == PL_CUDA_ATTN_VECTOR ? (R <= 1 ? 1 : R <= 2 ? 2 : R <= 4 ? 4 : 8) : 8;
        const long long max_ctx = (long long)a->max_pages * a->page_size;
        const long long base = (long long)a->batch * a->num_kv_heads * ((R + rows - 1) / rows);
        /* DECODE_MMA: 8-warp CTAs, one per SM, when the (row chunk, KV head, row) units are no
         * more than the SMs (measured 4-5% off 1x8192 and 8x4096, 16x32768 0-2%; 128x1024 8%
         * slower). With old keys read before the PDL wait, 4-warp CTAs (100 KiB) enter beside
         * the kernels before and start early, which 8-warp ones (197 KiB) mostly cannot: only up
         * to SMs / 8 units then (decode steps of Qwen3-4B on the H200: batch 4-8 1.1-2.8%
         * faster with 4 warps, batch 16 level, batch 1 0.4-0.7% slower). mma_warps 4 or 8 forces
         * the width. */
        const long long sms = sm_count(), wide_max = o.decode_early_kv == 1 && p.pdl ? sms / 8 : sms;
        if (kern == PL_CUDA_ATTN_DECODE_MMA && (o.mma_warps == 8 || (o.mma_warps != 4 && base <= wide_max))) p.wide_ctas = 1;
        const long long resident = sms * (kern == PL_CUDA_ATTN_VECTOR && rows < 8 ? 3 : p.wide_ctas ? 1 : 2);
        long long splits = o.num_splits;
        /* keys per split of s splits over the table (a multiple of 64), and the most splits of at least 128 */
        auto chunk_of = [max_ctx](long long s) { return ((max_ctx + s - 1) / s + 63) / 64 * 64; };
        const long long smax = (max_ctx + 127) / 128;
        if (splits <= 0 && o.host_context_lens && kern == PL_CUDA_ATTN_DECODE_MMA && !p.wide_ctas) {
            /* the step's own contexts (the backend passes them): the most splits of at most 256 keys, in one wave,
             * whose units that hold keys are no more than the SMs. Measured in Qwen3-4B decode
             * steps on the H200 (thirty-sixth session): at batch 4 the shape heuristic's 8 splits
             * of 128 keys left 160-256 such CTAs at contexts 512-900 and took 2-5% longer than 4-6
             * splits; a rule from the table's width alone lost at short contexts. */
            auto keyed_at = [&](long long ch) { /* units holding keys at ch keys per split */
                long long keyed = 0;
                for (int b = 0; b < a->batch; ++b) {
                    const long long c = o.host_context_lens[b] > 0 ? o.host_context_lens[b] : 0;
                    keyed += base / a->batch * (((c < max_ctx ? c : max_ctx) + ch - 1) / ch);
                }
                return keyed;
            };
            for (long long s = smax < 256 ? smax : 256; s >= 1 && splits <= 0; --s) {
                const long long ch = chunk_of(s);
                if (ch > 256) break; /* fewer splits only lengthen them */
                if (base * ((max_ctx + ch - 1) / ch) > resident) continue; /* past one wave */
                if (keyed_at(ch) <= sms) splits = s;
            }
        }
        if (splits <= 0) {
            /* fewest waves x keys per CTA, at least 128 keys per split, a small cost per split */
            long long best = 1, best_cost = -1;
            for (long long s = 1; s <= smax && s <= 256; ++s) {
                const long long ch = chunk_of(s);
                const long long waves = (base * s + resident - 1) / resident;
                const long long cost = waves * (ch + 96) + 2 * s;
                if (best_cost < 0 || cost < best_cost) {
                    best_cost = cost;
                    best = s;
                }
            }
            splits = best;
        }
        if (splits < 1) splits = 1;
        if (splits > 65535) splits = 65535;
        const long long chunk = chunk_of(splits);
        splits = (max_ctx + chunk - 1) / chunk;
        if (splits < 1) splits = 1;
        p.splits = (int)splits;
        p.chunk = (int)chunk;
        /* DECODE_MMA K/V copies: TMA boxes stream faster over long ranges (measured 16x32768
         * 0-1.8%, 64x8192 0.5%), but an 8-warp CTA on a short range finished later with them
         * (1x8192 6%, 8x4096 3.5%): cp.async there */
        p.decode_copy = o.decode_copy == 1 || o.decode_copy == 2 ? o.decode_copy : p.wide_ctas && p.chunk < 4096 ? 1 : 0;
        p.early_kv = kern == PL_CUDA_ATTN_DECODE_MMA && o.decode_early_kv == 1 && p.pdl;
        p.lean = o.decode_lean != 1;
        /* DECODE_MMA work units; past one wave, a CTA takes several in a row (its stream runs on
         * into the next unit instead of a second wave of CTAs starting from nothing) */
        const long long units = base * splits;
        if (units > INT_MAX) return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "decode: %lld work units (batch x KV heads x splits) exceed %d", units, INT_MAX);
        p.units = (int)units;
        p.units_per_cta = 1;
        if (o.decode_units_per_cta > 0) p.units_per_cta = o.decode_units_per_cta;
        else if (kern == PL_CUDA_ATTN_DECODE_MMA && !p.wide_ctas && R <= 8 && units > resident)
            p.units_per_cta = (int)((units + resident - 1) / resident);
        /* strided, not runs: with runs a CTA takes consecutive KV heads of one sequence, so in a
         * serving batch (contexts 128-2560) the CTAs of the longest ones set the kernel's end
         * (batch 64: its CTAs left over 95 us against 17 for equal contexts). Ranked by context
         * and paired long with short, such a step took 1.24x its roofline, 1.31x strided in
         * sequence order, 1.38x in runs (PERF.md, thirty-fifth session). */
        p.strided = kern == PL_CUDA_ATTN_DECODE_MMA && p.units_per_cta > 1 && o.decode_units_order != 1 ? (o.decode_units_order == 2 ? 1 : o.decode_units_order == 3 || o.decode_units_order == 4 ? o.decode_units_order : 2) : 0;
        if (p.strided == 2 && o.decode_units_order == 0 && o.decode_ranked) {
            const size_t nbt = (size_t)a->batch * a->max_pages;
            p.rank_bt = o.decode_ranked;
            p.rank_ctx = o.decode_ranked + nbt;
            p.rank_seq = o.decode_ranked + nbt + a->batch;
        }
        if (kern == PL_CUDA_ATTN_DECODE_MMA && p.units_per_cta > 1 && (p.wide_ctas || R > 8))
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                           "decode_units_per_cta: %d units per CTA need 4-warp CTAs and at most 8 query rows per KV head (here %d warps, %d rows)",
                           p.units_per_cta, p.wide_ctas ? 8 : 4, R);
    }
    if (o.rope) {
        const pl_cuda_attn_rope *r = o.rope;
        if (kern != PL_CUDA_ATTN_DECODE_MMA || a->query_len != 1 || p.group > 16)
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                           "rope: the fused q/k norm + RoPE + K/V append needs the DECODE_MMA kernel, query_len 1 and at most 16 query heads per KV head (here kernel %d, query_len %d, %d heads per KV head)",
                           (int)kern, a->query_len, p.group);
        if (!r->qkv || !r->q_norm || !r->k_norm || !r->cos_sin || !r->page_ids || !r->slots)
            return pl_fail(err, err_len, PL_ERR_INVALID, "rope: qkv, q_norm, k_norm, cos_sin, page_ids and slots must all be set");
        if (r->row_stride < (size_t)(a->num_heads + 2 * a->num_kv_heads) * a->head_dim)
            return pl_fail(err, err_len, PL_ERR_INVALID, "rope: row_stride %zu is below (num_heads + 2 * num_kv_heads) * head_dim = %d",
                           r->row_stride, (a->num_heads + 2 * a->num_kv_heads) * a->head_dim);
        if (!(r->eps >= 0.f) || !isfinite(r->eps)) return pl_fail(err, err_len, PL_ERR_INVALID, "rope: eps %g must be finite and >= 0", (double)r->eps);
        p.rope = 1;
        p.rp = *r;
    }
    *kern_out = kern;
    *pp = p;
    *rows_out = rows;
    return PL_OK;
}

static size_t split_bytes(const pl_attn_params *p) {
    if (p->splits <= 1) return 0;
    const size_t rows_out = (size_t)p->batch * p->query_len * p->num_heads * p->splits;
    return rows_out * ((size_t)p->head_dim + 2) * sizeof(float);
}

extern "C" size_t pl_cuda_attn_workspace_bytes(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt) {
    pl_cuda_attn_kernel kern;
    pl_attn_params p;
    int rows;
    char err[8];
    if (plan(a, opt, &kern, &p, &rows, err, sizeof err) != PL_OK) return 0;
    return split_bytes(&p);
}

extern "C" int pl_cuda_attn_check(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt, char *err, size_t err_len) {
    pl_cuda_attn_kernel kern;
    pl_attn_params p;
    int rows;
    return plan(a, opt, &kern, &p, &rows, err, err_len);
}

namespace {
struct rank_key {
    int32_t ctx, seq;
};
/* falling context, ties by sequence: a total order, so qsort ranks as the kernel does */
int rank_cmp(const void *x, const void *y) {
    const rank_key *a = static_cast<const rank_key *>(x), *b = static_cast<const rank_key *>(y);
    if (a->ctx != b->ctx) return a->ctx > b->ctx ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}
} // namespace

extern "C" size_t pl_cuda_attn_rank(int batch, int max_pages, const int32_t *block_table, const int32_t *context_lens, int32_t *out) {
    if (batch <= 0 || max_pages <= 0 || !block_table || !context_lens || !out) return 0;
    rank_key *k = static_cast<rank_key *>(malloc(sizeof(rank_key) * (size_t)batch));
    if (!k) return 0;
    for (int b = 0; b < batch; ++b) k[b].ctx = context_lens[b], k[b].seq = b;
    qsort(k, (size_t)batch, sizeof *k, rank_cmp);
    const size_t nbt = (size_t)batch * max_pages;
    for (int r = 0; r < batch; ++r) {
        out[nbt + r] = k[r].ctx;
        out[nbt + batch + r] = k[r].seq;
        memcpy(out + (size_t)r * max_pages, block_table + (size_t)k[r].seq * max_pages, sizeof(int32_t) * (size_t)max_pages);
    }
    free(k);
    return nbt + 2 * (size_t)batch;
}

extern "C" int pl_cuda_attn_plan_info(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt, pl_cuda_attn_kernel *kernel,
                                      int *splits, int *ctas, int *units_per_cta, char *err, size_t err_len) {
    pl_cuda_attn_kernel kern;
    pl_attn_params p;
    int rows;
    const int st = plan(a, opt, &kern, &p, &rows, err, err_len);
    if (st != PL_OK) return st;
    const int upc = kern == PL_CUDA_ATTN_DECODE_MMA ? p.units_per_cta : 1;
    if (kernel) *kernel = kern;
    if (splits) *splits = p.splits;
    if (units_per_cta) *units_per_cta = upc;
    if (ctas) *ctas = kern == PL_CUDA_ATTN_DECODE_MMA ? (p.units + upc - 1) / upc : 0;
    return PL_OK;
}

extern "C" int pl_paged_attention_cuda_ex(const pl_paged_attention_args *a, const pl_cuda_attn_options *opt,
                                          void *cuda_stream, char *err, size_t err_len) {
    pl_cuda_attn_kernel kern;
    pl_attn_params p;
    int rows;
    int st = plan(a, opt, &kern, &p, &rows, err, err_len);
    if (st != PL_OK) return st;
    cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
    if (kern == PL_CUDA_ATTN_MMA) return pl_cuda_attn_mma_launch(&p, rows, stream, err, err_len);

    void *ws = NULL;
    bool pooled = false;
    const size_t bytes = split_bytes(&p);
    if (bytes) {
        if (opt && opt->workspace && opt->workspace_bytes >= bytes) {
            ws = opt->workspace;
        } else {
            cudaError_t e = cudaMallocAsync(&ws, bytes, stream);
            if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "attention workspace (%zu bytes): %s", bytes, cudaGetErrorString(e));
            pooled = true;
        }
        p.part_o = static_cast<float *>(ws);
        p.part_ml = p.part_o + (size_t)p.batch * p.query_len * p.num_heads * p.splits * p.head_dim;
    }
    if (kern == PL_CUDA_ATTN_DECODE_MMA) st = pl_cuda_attn_decode_mma_launch(&p, stream, err, err_len);
    else st = pl_cuda_attn_split_launch(&p, a->dtype, kern == PL_CUDA_ATTN_VECTOR, rows, stream, err, err_len);
    if (pooled) {
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
