/* pl_paged_attention: validation in the reference's order, then dispatch by shape. */
#include <stdint.h>
#include <stdlib.h>

#include "attn/attn_internal.h"
#include "pagellm/attention.h"

static const char *schedule_name(pl_attn_schedule s) {
    switch (s) {
    case PL_ATTN_AUTO: return "PL_ATTN_AUTO";
    case PL_ATTN_REFERENCE: return "PL_ATTN_REFERENCE";
    case PL_ATTN_SCALAR: return "PL_ATTN_SCALAR";
    case PL_ATTN_DECODE: return "PL_ATTN_DECODE";
    case PL_ATTN_FLASH: return "PL_ATTN_FLASH";
    }
    return "?";
}

/* a * b * c * d elements fit in size_t and in half the address space. */
static int product_ok(int64_t a, int64_t b, int64_t c, int64_t d) {
    const int64_t lim = INT64_MAX / 4;
    int64_t p = a;
    if (b > lim / p) return 0;
    p *= b;
    if (c > lim / p) return 0;
    p *= c;
    if (d > lim / p) return 0;
    return 1;
}

int pl_paged_attention_validate(const pl_paged_attention_args *a, char *err, size_t err_len) {
    if (!a) return pl_fail(err, err_len, PL_ERR_INVALID, "args: NULL pointer");
    if (a->page_size <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "page_size: must be a positive integer, got %d", a->page_size);
    const struct { const char *name; int v; } sizes[] = {
        {"batch", a->batch},         {"num_heads", a->num_heads}, {"query_len", a->query_len},
        {"head_dim", a->head_dim},   {"num_kv_heads", a->num_kv_heads},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v <= 0)
            return pl_fail(err, err_len, PL_ERR_INVALID, "%s: must be positive, got %d", sizes[i].name, sizes[i].v);
    if (a->num_pages <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "num_pages: needs nonempty physical page storage, got %d",
                       a->num_pages);
    if (a->num_heads % a->num_kv_heads != 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "num_heads: %d is not a multiple of num_kv_heads %d", a->num_heads,
                       a->num_kv_heads);
    if (a->max_pages <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "max_pages: must be positive, got %d", a->max_pages);
    if (a->dtype != PL_F32 && a->dtype != PL_BF16)
        return pl_fail(err, err_len, PL_ERR_INVALID, "dtype: unknown dtype %d (want PL_F32 or PL_BF16)", (int)a->dtype);
    if ((unsigned)a->schedule > (unsigned)PL_ATTN_FLASH)
        return pl_fail(err, err_len, PL_ERR_INVALID, "schedule: unknown schedule %d", (int)a->schedule);
    if (!product_ok(a->batch, a->query_len, a->num_heads, a->head_dim) ||
        !product_ok(a->num_pages, a->num_kv_heads, a->page_size, a->head_dim) ||
        !product_ok(a->batch, a->max_pages, 1, 1))
        return pl_fail(err, err_len, PL_ERR_INVALID, "shape: element counts overflow");
    const struct { const char *name; const void *p; } ptrs[] = {
        {"query", a->query},           {"key_pages", a->key_pages},       {"value_pages", a->value_pages},
        {"block_table", a->block_table}, {"context_lens", a->context_lens}, {"out", a->out},
    };
    for (size_t i = 0; i < sizeof ptrs / sizeof ptrs[0]; i++)
        if (!ptrs[i].p) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: NULL pointer", ptrs[i].name);

    /* Row metadata: which (row, slot) first used each page id, to name both on aliasing. */
    int32_t *owner = malloc(sizeof(int32_t) * (size_t)a->num_pages);
    if (!owner) return pl_fail(err, err_len, PL_ERR_NOMEM, "validation: cannot allocate %d page marks", a->num_pages);
    for (int i = 0; i < a->num_pages; i++) owner[i] = -1;
    int rc = PL_OK;
    for (int b = 0; b < a->batch && rc == PL_OK; b++) {
        int ctx = a->context_lens[b];
        const int32_t *row = a->block_table + (size_t)b * (size_t)a->max_pages;
        if (ctx < 0) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "context_lens[%d]: %d must be nonnegative", b, ctx);
            break;
        }
        int64_t live = ((int64_t)ctx + a->page_size - 1) / a->page_size;
        if (live > a->max_pages) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "context_lens[%d]: %d needs %lld pages and is not covered by block_table (max_pages %d)", b,
                         ctx, (long long)live, a->max_pages);
            break;
        }
        for (int i = 0; i < a->max_pages; i++) {
            int32_t id = row[i];
            if (i < live) {
                if (id < 0 || id >= a->num_pages) {
                    rc = pl_fail(err, err_len, PL_ERR_INVALID,
                                 "block_table[%d][%d]: page id %d is outside physical page storage [0, %d)", b, i, id,
                                 a->num_pages);
                    break;
                }
                if (owner[id] >= 0) {
                    rc = pl_fail(err, err_len, PL_ERR_INVALID,
                                 "block_table[%d][%d]: page id %d is aliased (already live at block_table[%d][%d])", b,
                                 i, id, owner[id] / a->max_pages, owner[id] % a->max_pages);
                    break;
                }
                owner[id] = (int32_t)(b * a->max_pages + i);
            } else if (id != -1) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID,
                             "block_table[%d][%d]: entry %d past the %lld live pages must use the -1 sentinel", b, i,
                             id, (long long)live);
                break;
            }
        }
        if (rc == PL_OK && ctx > 0 && ctx < a->query_len)
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "context_lens[%d]: %d must be zero or at least query length %d", b, ctx, a->query_len);
    }
    free(owner);
    return rc;
}

int pl_paged_attention_simd(const pl_paged_attention_args *a, int simd_level, char *err, size_t err_len) {
    int rc = pl_paged_attention_validate(a, err, err_len);
    if (rc != PL_OK) return rc;
    int best = pl_attn_simd_detect();
    if (simd_level < 0 || simd_level > best) simd_level = best;
    pl_attn_schedule s = a->schedule;
    if (s == PL_ATTN_AUTO) s = a->query_len <= 8 ? PL_ATTN_DECODE : PL_ATTN_FLASH;
    switch (s) {
    case PL_ATTN_REFERENCE: rc = pl_attn_reference(a); break;
    case PL_ATTN_SCALAR: rc = pl_attn_scalar(a); break;
    case PL_ATTN_DECODE:
        if (a->query_len > 8)
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "schedule: %s takes query_len <= 8, got %d",
                           schedule_name(a->schedule), a->query_len);
        rc = pl_attn_decode(a, simd_level);
        break;
    case PL_ATTN_FLASH: rc = pl_attn_flash(a, simd_level); break;
    default: return pl_fail(err, err_len, PL_ERR_INTERNAL, "schedule: unhandled %d", (int)s);
    }
    if (rc == PL_ERR_NOMEM)
        return pl_fail(err, err_len, rc, "%s: cannot allocate scratch memory", schedule_name(a->schedule));
    if (rc != PL_OK) return pl_fail(err, err_len, rc, "%s: failed", schedule_name(a->schedule));
    return PL_OK;
}

int pl_paged_attention(const pl_paged_attention_args *args, char *err, size_t err_len) {
    return pl_paged_attention_simd(args, PL_SIMD_AUTO, err, err_len);
}
