/* Spec 6.2 invalid-metadata cases and the other argument checks: every schedule returns the
 * error with the reference's words and leaves out untouched. */
#include "attn_testlib.h"
#include "test_util.h"

static const pl_attn_schedule scheds[] = {PL_ATTN_AUTO, PL_ATTN_REFERENCE, PL_ATTN_SCALAR, PL_ATTN_DECODE,
                                          PL_ATTN_FLASH};

/* Runs args under every schedule; each must fail with st and sub, out byte-identical. */
static void expect_error(pl_paged_attention_args a, int st, const char *sub, size_t out_bytes) {
    char err[256];
    unsigned char *out = a.out, *saved = malloc(out_bytes ? out_bytes : 1);
    if (out) memcpy(saved, out, out_bytes);
    for (int i = 0; i < 5; i++) {
        a.schedule = scheds[i];
        CHECK_ERR(pl_paged_attention(&a, err, sizeof err), st, sub, err);
        if (out) CHECK_MSG(memcmp(saved, out, out_bytes) == 0, "schedule %d wrote out on error (%s)", i, sub);
    }
    CHECK_ERR(pl_paged_attention_validate(&a, err, sizeof err), st, sub, err);
    free(saved);
}

/* The fixture of spec 6.2: pages (3, 2, 32, D), one row, 3 table slots. */
static void metadata_cases(int L, pl_dtype dt, int D) {
    int ctx0 = L > 64 ? 65 : 40;
    at_problem p;
    int ctx[1] = {ctx0};
    at_build(&p, dt, 1, 2, 2, L, D, 32, ctx, 1, 3 - (ctx0 + 31) / 32, 3 - (ctx0 + 31) / 32, 7);
    CHECK(p.a.num_pages == 3 && p.a.max_pages == 3);
    size_t ob = p.q_elems * at_esize(dt);
    int32_t bt0[3];
    memcpy(bt0, p.bt, sizeof bt0);
    char err[256];
    /* the base problem is valid */
    CHECK_OK(pl_paged_attention_validate(&p.a, err, sizeof err), err);
#define RESET() (memcpy(p.bt, bt0, sizeof bt0), p.ctx[0] = ctx0, p.a.max_pages = 3, p.a.page_size = 32)
    RESET();
    p.ctx[0] = -1;
    expect_error(p.a, PL_ERR_INVALID, "nonnegative", ob);
    RESET();
    p.ctx[0] = 97;
    expect_error(p.a, PL_ERR_INVALID, "not covered", ob);
    RESET();
    p.ctx[0] = 65;
    p.a.max_pages = 2; /* a [1, 2] view of the same table */
    expect_error(p.a, PL_ERR_INVALID, "not covered", ob);
    RESET();
    p.bt[0] = -1;
    expect_error(p.a, PL_ERR_INVALID, "outside physical page storage", ob);
    RESET();
    p.bt[0] = 3;
    expect_error(p.a, PL_ERR_INVALID, "outside physical page storage", ob);
    RESET();
    p.bt[1] = p.bt[0];
    expect_error(p.a, PL_ERR_INVALID, "aliased", ob);
    RESET();
    p.ctx[0] = 40; /* two live pages, then padding (checked before the query-length rule) */
    p.bt[2] = -2;
    expect_error(p.a, PL_ERR_INVALID, "-1 sentinel", ob);
    RESET();
    p.ctx[0] = 40;
    p.bt[2] = 3 - bt0[0] - bt0[1]; /* the third, otherwise unused, page id in a padding slot */
    expect_error(p.a, PL_ERR_INVALID, "-1 sentinel", ob);
    RESET();
    p.a.page_size = 0;
    expect_error(p.a, PL_ERR_INVALID, "positive integer", ob);
    RESET();
    /* active context shorter than the query */
    if (L > 1) {
        p.ctx[0] = L - 1;
        for (int i = (L - 1 + 31) / 32; i < 3; i++) p.bt[i] = -1;
        expect_error(p.a, PL_ERR_INVALID, "must be zero or at least query length", ob);
        RESET();
    }
    at_free(&p);
#undef RESET
}

int main(void) {
    metadata_cases(1, PL_F32, 4);
    metadata_cases(9, PL_BF16, 128);
    metadata_cases(65, PL_BF16, 128);

    /* (L 2, ctx 1, f32), (L 9, ctx 8), (L 65, ctx 64) bf16 */
    const int shapes[3][3] = {{2, 1, PL_F32}, {9, 8, PL_BF16}, {65, 64, PL_BF16}};
    for (int i = 0; i < 3; i++) {
        at_problem p;
        int ctx[1] = {shapes[i][1]};
        at_build(&p, (pl_dtype)shapes[i][2], 1, 4, 2, shapes[i][0], shapes[i][2] == PL_F32 ? 4 : 128, 32, ctx, 1, 1, 1, 9);
        expect_error(p.a, PL_ERR_INVALID, "must be zero or at least query length", p.q_elems * at_esize(p.a.dtype));
        at_free(&p);
    }

    /* argument checks */
    at_problem p;
    int ctx2[2] = {40, 0};
    at_build(&p, PL_F32, 2, 4, 2, 1, 16, 16, ctx2, 0, 1, 1, 11);
    size_t ob = p.q_elems * 4;
    char err[256];
    CHECK_ERR(pl_paged_attention(NULL, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    pl_paged_attention_args a = p.a;
#define CASE(field, value, sub)                       \
    do {                                              \
        a = p.a;                                      \
        a.field = value;                              \
        expect_error(a, PL_ERR_INVALID, sub, ob);     \
    } while (0)
    CASE(batch, 0, "batch");
    CASE(num_heads, -1, "num_heads");
    CASE(num_kv_heads, 0, "num_kv_heads");
    CASE(query_len, 0, "query_len");
    CASE(head_dim, 0, "head_dim");
    CASE(num_pages, 0, "nonempty physical page storage");
    CASE(max_pages, 0, "max_pages");
    CASE(num_kv_heads, 3, "not a multiple of num_kv_heads");
    CASE(dtype, (pl_dtype)7, "dtype");
    CASE(query, NULL, "query: NULL");
    CASE(key_pages, NULL, "key_pages: NULL");
    CASE(value_pages, NULL, "value_pages: NULL");
    CASE(block_table, NULL, "block_table: NULL");
    CASE(context_lens, NULL, "context_lens: NULL");
    a = p.a;
    a.out = NULL;
    expect_error(a, PL_ERR_INVALID, "out: NULL", 0);
    a = p.a;
    a.schedule = (pl_attn_schedule)9;
    CHECK_ERR(pl_paged_attention(&a, err, sizeof err), PL_ERR_INVALID, "schedule", err);
    /* an aliased page across two rows */
    at_free(&p);
    int ctx3[2] = {20, 20};
    at_build(&p, PL_F32, 2, 4, 2, 1, 16, 16, ctx3, 0, 0, 0, 12);
    p.bt[p.a.max_pages] = p.bt[0];
    expect_error(p.a, PL_ERR_INVALID, "aliased", p.q_elems * 4);
    at_free(&p);

    /* forced DECODE outside its range: unsupported, out untouched; AUTO computes */
    int ctx4[1] = {50};
    at_build(&p, PL_F32, 1, 2, 1, 9, 16, 16, ctx4, 1, 0, 0, 13);
    memset(p.out, 0x5a, p.q_elems * 4);
    a = p.a;
    a.schedule = PL_ATTN_DECODE;
    CHECK_ERR(pl_paged_attention(&a, err, sizeof err), PL_ERR_UNSUPPORTED, "query_len <= 8", err);
    CHECK(((unsigned char *)p.out)[0] == 0x5a && ((unsigned char *)p.out)[p.q_elems * 4 - 1] == 0x5a);
    a.schedule = PL_ATTN_AUTO;
    CHECK_OK(pl_paged_attention(&a, err, sizeof err), err);
    at_free(&p);
    TEST_END();
}
