/* The page-pool and sequence-cache fixtures of spec 6.1, in C. */
#include <math.h>

#include "kv_test_util.h"
#include "test_util.h"

static char err[512];

static pl_page_pool *make_pool(pl_dtype dt, int H, int ps, int D, pl_pool_mode mode, int capped) {
    pl_page_pool_config cfg = {dt, H, ps, D, mode, capped, NULL};
    pl_page_pool *p = NULL;
    CHECK_OK(pl_page_pool_create(&cfg, &p, err, sizeof err), err);
    return p;
}

static pl_kv_chunk chunk_f32(const float *k, const float *v, int n, int H, int D) {
    pl_kv_chunk c = {PL_F32, n, H, D, k, v, 0};
    return c;
}

/* Gathered head-major [H, S, D] equals the dense token-major [S, H, D] copy. */
static int gathered_equals(const pl_seq_cache *c, const float *dk, const float *dv, int H, int D) {
    int S = c->offset;
    float *gk = malloc(sizeof(float) * (size_t)(H * S * D)), *gv = malloc(sizeof(float) * (size_t)(H * S * D));
    int ok = pl_seq_cache_gather(c, gk, gv, err, sizeof err) == PL_OK;
    for (int h = 0; ok && h < H; h++)
        for (int s = 0; s < S; s++)
            for (int d = 0; d < D; d++) {
                float a = gk[((size_t)h * S + s) * D + d], b = dk[((size_t)s * H + h) * D + d];
                float x = gv[((size_t)h * S + s) * D + d], y = dv[((size_t)s * H + h) * D + d];
                if (a != b || x != y) ok = 0;
            }
    free(gk);
    free(gv);
    return ok;
}

static void test_paged_matches_dense(void) {
    const int H = 2, D = 4, ps = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 1);
    pl_page_pool *pool = make_pool(PL_F32, H, ps, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache c;
    pl_seq_cache_init(&c, pool);
    float dk[10 * 8], dv[10 * 8];
    int total = 0, sizes[3] = {3, 2, 5};
    for (int i = 0; i < 3; i++) {
        float *k = kvt_random_f32(&rng, sizes[i], H, D), *v = kvt_random_f32(&rng, sizes[i], H, D);
        pl_kv_chunk ch = chunk_f32(k, v, sizes[i], H, D);
        CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
        memcpy(dk + total * H * D, k, sizeof(float) * (size_t)(sizes[i] * H * D));
        memcpy(dv + total * H * D, v, sizeof(float) * (size_t)(sizes[i] * H * D));
        total += sizes[i];
        free(k);
        free(v);
        CHECK(c.offset == total);
        CHECK(c.num_pages == (total + ps - 1) / ps);
        int sum = 0;
        for (int p = 0; p < c.num_pages; p++) sum += c.page_lens[p];
        CHECK(sum == total);
        CHECK(gathered_equals(&c, dk, dv, H, D));
        CHECK_OK(pl_seq_cache_check(&c, err, sizeof err), err);
    }
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.page_bytes == 2 * (size_t)(H * ps * D) * sizeof(float)); /* every page holds page_size slots */
    pl_seq_cache_destroy(&c);
    pl_page_pool_destroy(pool);
}

static void test_pool_reuses_freed_pages(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 2);
    pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache a, b;
    pl_seq_cache_init(&a, pool);
    pl_seq_cache_init(&b, pool);
    float *k = kvt_random_f32(&rng, 6, H, D), *v = kvt_random_f32(&rng, 6, H, D);
    pl_kv_chunk ch = chunk_f32(k, v, 6, H, D);
    CHECK_OK(pl_seq_cache_append(&a, &ch, err, sizeof err), err);
    CHECK(a.num_pages == 2 && a.page_ids[0] == 0 && a.page_ids[1] == 1);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.num_pages == 2 && st.free_pages == 0 && st.live_pages == 2);
    CHECK_OK(pl_seq_cache_release(&a, err, sizeof err), err);
    CHECK(a.offset == 0 && a.num_pages == 0);
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.num_pages == 2 && st.free_pages == 2 && st.live_pages == 0);
    float *k2 = kvt_random_f32(&rng, 5, H, D), *v2 = kvt_random_f32(&rng, 5, H, D);
    pl_kv_chunk ch2 = chunk_f32(k2, v2, 5, H, D);
    CHECK_OK(pl_seq_cache_append(&b, &ch2, err, sizeof err), err);
    CHECK(b.num_pages == 2);
    CHECK((b.page_ids[0] == 0 && b.page_ids[1] == 1) || (b.page_ids[0] == 1 && b.page_ids[1] == 0));
    CHECK(b.page_ids[0] == 1); /* LIFO: the last page freed is handed out first */
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.num_pages == 2 && st.free_pages == 0 && st.reused_allocations == 2);
    CHECK(gathered_equals(&b, k2, v2, H, D));
    /* Double free and out-of-range free are errors. */
    CHECK_ERR(pl_page_pool_free(pool, 7, err, sizeof err), PL_ERR_INVALID, "out of range", err);
    CHECK_OK(pl_seq_cache_release(&b, err, sizeof err), err);
    CHECK_ERR(pl_page_pool_free(pool, 0, err, sizeof err), PL_ERR_INVALID, "already free", err);
    free(k), free(v), free(k2), free(v2);
    pl_seq_cache_destroy(&a);
    pl_seq_cache_destroy(&b);
    pl_page_pool_destroy(pool);
}

static void test_rejects_mismatch_without_mutating(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 3);
    pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache c;
    pl_seq_cache_init(&c, pool);
    float *k = kvt_random_f32(&rng, 3, H, D), *v = kvt_random_f32(&rng, 3, H, D);
    pl_kv_chunk ch = chunk_f32(k, v, 3, H, D);
    CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
    kvt_snapshot before, after;
    kvt_snap(&c, &before);
    uint16_t kb[2 * 2 * 4] = {0}, vb[2 * 2 * 4] = {0};
    pl_kv_chunk bad = {PL_BF16, 2, H, D, kb, vb, 0};
    CHECK_ERR(pl_seq_cache_append(&c, &bad, err, sizeof err), PL_ERR_INVALID, "existing page storage dtype", err);
    kvt_snap(&c, &after);
    CHECK(kvt_same(&before, &after));
    pl_kv_chunk bad_shape = chunk_f32(k, v, 2, 1, D);
    CHECK_ERR(pl_seq_cache_append(&c, &bad_shape, err, sizeof err), PL_ERR_INVALID, "existing page storage shape", err);
    pl_kv_chunk bad_d = chunk_f32(k, v, 1, H, 8);
    CHECK_ERR(pl_seq_cache_append(&c, &bad_d, err, sizeof err), PL_ERR_INVALID, "existing page storage shape", err);
    pl_kv_chunk no_v = chunk_f32(k, NULL, 1, H, D);
    CHECK_ERR(pl_seq_cache_append(&c, &no_v, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    pl_kv_chunk zero = chunk_f32(k, v, 0, H, D);
    CHECK_ERR(pl_seq_cache_append(&c, &zero, err, sizeof err), PL_ERR_INVALID, "positive", err);
    pl_kv_chunk bad_stride = chunk_f32(k, v, 1, H, D);
    bad_stride.token_stride = 3;
    CHECK_ERR(pl_seq_cache_append(&c, &bad_stride, err, sizeof err), PL_ERR_INVALID, "token_stride", err);
    kvt_snap(&c, &after);
    CHECK(kvt_same(&before, &after));
    free(k), free(v);
    pl_seq_cache_destroy(&c);
    pl_page_pool_destroy(pool);
}

static void test_rollback_on_failed_write(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 4);
    for (int prefill = 0; prefill <= 2; prefill += 2) {
        pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
        pl_seq_cache c, other;
        pl_seq_cache_init(&c, pool);
        pl_seq_cache_init(&other, pool);
        float *k = kvt_random_f32(&rng, 5, H, D), *v = kvt_random_f32(&rng, 5, H, D);
        if (prefill) {
            pl_kv_chunk pre = chunk_f32(k, v, prefill, H, D);
            CHECK_OK(pl_seq_cache_append(&c, &pre, err, sizeof err), err);
            /* A free page on the stack, so the failed append must restore the stack too. */
            CHECK_OK(pl_seq_cache_append(&other, &pre, err, sizeof err), err);
            CHECK_OK(pl_seq_cache_release(&other, err, sizeof err), err);
        }
        kvt_snapshot before, after;
        kvt_snap(&c, &before);
        void *kptr = pl_page_pool_keys(pool);
        pl_page_pool_inject_write_failure(pool, 2);
        pl_kv_chunk ch = chunk_f32(k, v, 5, H, D);
        CHECK_ERR(pl_seq_cache_append(&c, &ch, err, sizeof err), PL_ERR_IO, "injected", err);
        kvt_snap(&c, &after);
        CHECK(kvt_same(&before, &after));
        CHECK(pl_page_pool_keys(pool) == kptr);
        CHECK_OK(pl_seq_cache_check(&c, err, sizeof err), err);
        /* The same append succeeds afterwards, and the data is right. */
        CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
        CHECK(c.offset == prefill + 5);
        float dk[7 * 8], dv[7 * 8];
        memcpy(dk, k, sizeof(float) * (size_t)(prefill * H * D));
        memcpy(dv, v, sizeof(float) * (size_t)(prefill * H * D));
        memcpy(dk + prefill * H * D, k, sizeof(float) * (size_t)(5 * H * D));
        memcpy(dv + prefill * H * D, v, sizeof(float) * (size_t)(5 * H * D));
        CHECK(gathered_equals(&c, dk, dv, H, D));
        free(k), free(v);
        pl_seq_cache_destroy(&c);
        pl_seq_cache_destroy(&other);
        pl_page_pool_destroy(pool);
    }
}

static void test_growth_and_reset(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 5);
    pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache c;
    pl_seq_cache_init(&c, pool);
    float *k = kvt_random_f32(&rng, 17, H, D), *v = kvt_random_f32(&rng, 17, H, D);
    pl_kv_chunk ch = chunk_f32(k, v, 17, H, D);
    CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(c.num_pages == 5 && st.num_pages == 5);
    CHECK(st.capacity_pages == 8);
    CHECK(st.growths == 2);
    CHECK(st.copied_pages == 4);
    CHECK(st.copied_bytes == 1024);
    CHECK(gathered_equals(&c, k, v, H, D));
    CHECK_ERR(pl_page_pool_reset(pool, err, sizeof err), PL_ERR_INVALID, "live requests", err);
    CHECK_OK(pl_seq_cache_release(&c, err, sizeof err), err);
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.capacity_pages == 8 && st.free_pages == 5);
    CHECK_OK(pl_page_pool_reset(pool, err, sizeof err), err);
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.capacity_pages == 0 && st.num_pages == 0 && st.free_pages == 0 && st.storage_bytes == 0);
    CHECK(st.growths == 0 && st.copied_pages == 0 && st.copied_bytes == 0 && st.reused_allocations == 0);
    CHECK(pl_page_pool_keys(pool) == NULL);
    free(k), free(v);
    pl_seq_cache_destroy(&c);
    pl_page_pool_destroy(pool);
}

static void test_rewind(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 6);
    pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache c;
    pl_seq_cache_init(&c, pool);
    float *k = kvt_random_f32(&rng, 9, H, D), *v = kvt_random_f32(&rng, 9, H, D);
    int sizes[3] = {4, 3, 2}, at = 0;
    for (int i = 0; i < 3; i++) {
        pl_kv_chunk ch = chunk_f32(k + at * H * D, v + at * H * D, sizes[i], H, D);
        CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
        at += sizes[i];
    }
    CHECK(c.num_pages == 3 && c.page_lens[0] == 4 && c.page_lens[1] == 4 && c.page_lens[2] == 1);
    CHECK_ERR(pl_seq_cache_rewind(&c, 10, err, sizeof err), PL_ERR_INVALID, "outside", err);
    CHECK_ERR(pl_seq_cache_rewind(&c, -1, err, sizeof err), PL_ERR_INVALID, "outside", err);
    CHECK_OK(pl_seq_cache_rewind(&c, 0, err, sizeof err), err);
    CHECK(c.offset == 9);
    CHECK_OK(pl_seq_cache_rewind(&c, 3, err, sizeof err), err);
    CHECK(c.offset == 6 && c.num_pages == 2 && c.page_lens[0] == 4 && c.page_lens[1] == 2);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.num_pages == 3 && st.free_pages == 1);
    CHECK(st.page_bytes == 2 * 4 * 2 * 4 * sizeof(float));
    CHECK(gathered_equals(&c, k, v, H, D));
    /* Appending after a rewind overwrites the stale slots. */
    pl_kv_chunk ch = chunk_f32(k + 6 * H * D, v + 6 * H * D, 3, H, D);
    CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
    CHECK(gathered_equals(&c, k, v, H, D));
    CHECK_OK(pl_seq_cache_rewind(&c, 9, err, sizeof err), err);
    CHECK(c.offset == 0 && c.num_pages == 0);
    float gk[8], gv[8];
    CHECK_ERR(pl_seq_cache_gather(&c, gk, gv, err, sizeof err), PL_ERR_INVALID, "empty", err);
    free(k), free(v);
    pl_seq_cache_destroy(&c);
    pl_page_pool_destroy(pool);
}

static void test_batch_metadata(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 7);
    pl_page_pool *pool = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache a, b;
    pl_seq_cache_init(&a, pool);
    pl_seq_cache_init(&b, pool);
    float *k = kvt_random_f32(&rng, 6, H, D), *v = kvt_random_f32(&rng, 6, H, D);
    pl_kv_chunk c3 = chunk_f32(k, v, 3, H, D), c6 = chunk_f32(k, v, 6, H, D);
    CHECK_OK(pl_seq_cache_append(&a, &c3, err, sizeof err), err);
    CHECK_OK(pl_seq_cache_append(&b, &c6, err, sizeof err), err);
    /* One decode token per active slot: reserve first, build once, then commit. */
    CHECK_OK(pl_seq_cache_reserve(&a, 1, err, sizeof err), err);
    CHECK_OK(pl_seq_cache_reserve(&b, 1, err, sizeof err), err);
    const pl_seq_cache *rows[3] = {&a, NULL, &b};
    int pending[3] = {1, 0, 1};
    int mp = pl_kv_max_pages(rows, 3);
    CHECK(mp == 2);
    int32_t bt[6], ctx[3];
    CHECK_OK(pl_kv_build_batch(rows, 3, pending, mp, bt, ctx, err, sizeof err), err);
    CHECK(ctx[0] == 4 && ctx[1] == 0 && ctx[2] == 7);
    CHECK(bt[0] == a.page_ids[0] && bt[1] == -1);
    CHECK(bt[2] == -1 && bt[3] == -1);
    CHECK(bt[4] == b.page_ids[0] && bt[5] == b.page_ids[1]);
    CHECK_ERR(pl_kv_build_batch(rows, 3, pending, 1, bt, ctx, err, sizeof err), PL_ERR_INVALID, "not covered", err);
    int too_many[3] = {2, 0, 1};
    CHECK_ERR(pl_kv_build_batch(rows, 3, too_many, mp, bt, ctx, err, sizeof err), PL_ERR_INVALID, "reserved", err);
    int bad_empty[3] = {1, 1, 1};
    CHECK_ERR(pl_kv_build_batch(rows, 3, bad_empty, mp, bt, ctx, err, sizeof err), PL_ERR_INVALID, "empty slot", err);
    CHECK_ERR(pl_kv_build_batch(NULL, 3, pending, mp, bt, ctx, err, sizeof err), PL_ERR_INVALID, "rows", err);
    CHECK_ERR(pl_kv_build_batch(rows, 0, pending, mp, bt, ctx, err, sizeof err), PL_ERR_INVALID, "batch", err);
    CHECK_ERR(pl_kv_build_batch(rows, 3, pending, mp, NULL, ctx, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    /* Rows of different pools are refused before anything is written. */
    pl_page_pool *pool2 = make_pool(PL_F32, H, 4, D, PL_POOL_GROWABLE, 0);
    pl_seq_cache other;
    pl_seq_cache_init(&other, pool2);
    CHECK_OK(pl_seq_cache_append(&other, &c3, err, sizeof err), err);
    const pl_seq_cache *mixed[2] = {&a, &other};
    int32_t bt2[4] = {99, 99, 99, 99}, ctx2[2] = {99, 99};
    CHECK_ERR(pl_kv_build_batch(mixed, 2, NULL, 2, bt2, ctx2, err, sizeof err), PL_ERR_INVALID, "share one page pool", err);
    CHECK(bt2[0] == 99 && ctx2[0] == 99);
    CHECK_OK(pl_seq_cache_commit(&a, 1, err, sizeof err), err);
    CHECK_ERR(pl_seq_cache_commit(&a, 5, err, sizeof err), PL_ERR_INVALID, "reserved", err);
    CHECK(a.offset == 4 && a.page_lens[0] == 4);
    /* Without pending, committed offsets are the contexts. */
    CHECK_OK(pl_kv_build_batch(rows, 3, NULL, mp, bt, ctx, err, sizeof err), err);
    CHECK(ctx[0] == 4 && ctx[2] == 6 && bt[5] == b.page_ids[1]);
    free(k), free(v);
    pl_seq_cache_destroy(&a);
    pl_seq_cache_destroy(&b);
    pl_seq_cache_destroy(&other);
    pl_page_pool_destroy(pool);
    pl_page_pool_destroy(pool2);
}

static void test_capped_exhaustion(void) {
    const int H = 2, D = 4;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 8);
    pl_page_pool *pool = make_pool(PL_BF16, H, 4, D, PL_POOL_CAPPED, 3);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.capacity_pages == 3 && st.storage_bytes == 2 * 3 * 2 * 4 * 4 * 2);
    pl_seq_cache a, b;
    pl_seq_cache_init(&a, pool);
    pl_seq_cache_init(&b, pool);
    uint16_t kb[8 * 8], vb[8 * 8];
    for (int i = 0; i < 64; i++) kb[i] = pl_f32_to_bf16((float)i), vb[i] = pl_f32_to_bf16((float)-i);
    pl_kv_chunk c6 = {PL_BF16, 6, H, D, kb, vb, 0};
    CHECK_OK(pl_seq_cache_append(&a, &c6, err, sizeof err), err);
    kvt_snapshot before_a, after_a, before_b, after_b;
    kvt_snap(&a, &before_a);
    kvt_snap(&b, &before_b);
    pl_kv_chunk c8 = {PL_BF16, 8, H, D, kb, vb, 0};
    CHECK_ERR(pl_seq_cache_append(&b, &c8, err, sizeof err), PL_ERR_NO_PAGES, "capped", err);
    CHECK_ERR(pl_seq_cache_reserve(&b, 5, err, sizeof err), PL_ERR_NO_PAGES, "capped", err);
    CHECK_ERR(pl_seq_cache_append(&a, &c8, err, sizeof err), PL_ERR_NO_PAGES, "capped", err);
    kvt_snap(&a, &after_a);
    kvt_snap(&b, &after_b);
    CHECK(kvt_same(&before_a, &after_a));
    CHECK(kvt_same(&before_b, &after_b));
    /* What fits still works: two more tokens fill a's tail page, then b takes the last page. */
    pl_kv_chunk c2 = {PL_BF16, 2, H, D, kb, vb, 0};
    CHECK_OK(pl_seq_cache_append(&a, &c2, err, sizeof err), err);
    CHECK_OK(pl_seq_cache_append(&b, &c2, err, sizeof err), err);
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.live_pages == 3 && st.growths == 0);
    int32_t id;
    CHECK_ERR(pl_page_pool_alloc(pool, &id, err, sizeof err), PL_ERR_NO_PAGES, "capped", err);
    /* Reset keeps the budget in capped mode. */
    CHECK_OK(pl_seq_cache_release(&a, err, sizeof err), err);
    CHECK_OK(pl_seq_cache_release(&b, err, sizeof err), err);
    CHECK_OK(pl_page_pool_reset(pool, err, sizeof err), err);
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.capacity_pages == 3 && st.num_pages == 0 && st.free_pages == 0);
    pl_seq_cache_destroy(&a);
    pl_seq_cache_destroy(&b);
    pl_page_pool_destroy(pool);
}

static void test_layers_in_lockstep(void) {
    const int H = 2, D = 4, L = 3;
    pl_page_pool_config cfg = {PL_F32, H, 4, D, PL_POOL_CAPPED, 4, NULL};
    pl_kv_pools pools;
    CHECK_OK(pl_kv_pools_create(&cfg, L, &pools, err, sizeof err), err);
    pl_kv_seq s1, s2;
    CHECK_OK(pl_kv_seq_init(&s1, &pools, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_init(&s2, &pools, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_reserve(&s1, 5, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_reserve(&s2, 4, err, sizeof err), err);
    CHECK(pl_kv_seq_num_pages(&s1) == 2 && pl_kv_seq_num_pages(&s2) == 1);
    for (int l = 0; l < L; l++) {
        CHECK(s1.layers[l].pool == pools.layers[l]);
        CHECK(s1.layers[l].page_ids[0] == 0 && s1.layers[l].page_ids[1] == 1); /* layer-local ids */
        CHECK(s2.layers[l].page_ids[0] == 2);
        CHECK_OK(pl_seq_cache_commit(&s1.layers[l], 5, err, sizeof err), err);
    }
    CHECK(pl_kv_seq_offset(&s1) == 5);
    /* 2 more pages do not fit the 4-page budget: every layer unchanged. */
    pl_page_pool_stats before, after;
    pl_kv_pools_get_stats(&pools, &before);
    CHECK_ERR(pl_kv_seq_reserve(&s2, 9, err, sizeof err), PL_ERR_NO_PAGES, "capped", err);
    pl_kv_pools_get_stats(&pools, &after);
    CHECK(memcmp(&before, &after, sizeof before) == 0);
    CHECK(pl_kv_seq_num_pages(&s2) == 1);
    CHECK(before.live_pages == 3 * L);
    CHECK_ERR(pl_kv_pools_reset(&pools, err, sizeof err), PL_ERR_INVALID, "live requests", err);
    CHECK_OK(pl_kv_seq_rewind(&s1, 2, err, sizeof err), err);
    CHECK(pl_kv_seq_offset(&s1) == 3 && pl_kv_seq_num_pages(&s1) == 1);
    CHECK_ERR(pl_kv_seq_rewind(&s1, 4, err, sizeof err), PL_ERR_INVALID, "outside", err);
    CHECK_OK(pl_kv_seq_release(&s1, err, sizeof err), err);
    CHECK_OK(pl_kv_seq_release(&s2, err, sizeof err), err);
    pl_kv_pools_get_stats(&pools, &after);
    CHECK(after.live_pages == 0);
    CHECK_OK(pl_kv_pools_reset(&pools, err, sizeof err), err);
    pl_kv_seq_destroy(&s1);
    pl_kv_seq_destroy(&s2);
    pl_kv_pools_destroy(&pools);
}

static void test_argument_checks(void) {
    pl_page_pool *p = NULL;
    pl_page_pool_config cfg = {PL_F32, 2, 4, 4, PL_POOL_GROWABLE, 0, NULL};
    CHECK_ERR(pl_page_pool_create(NULL, &p, err, sizeof err), PL_ERR_INVALID, "cfg", err);
    CHECK_ERR(pl_page_pool_create(&cfg, NULL, err, sizeof err), PL_ERR_INVALID, "out", err);
    cfg.dtype = (pl_dtype)7;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "dtype 7", err);
    cfg.dtype = PL_F32;
    cfg.num_kv_heads = 0;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "num_kv_heads", err);
    cfg.num_kv_heads = 2;
    cfg.page_size = -3;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "positive integer, got -3", err);
    cfg.page_size = 4;
    cfg.head_dim = 0;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "head_dim", err);
    cfg.head_dim = 4;
    cfg.mode = PL_POOL_CAPPED;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "capped_pages", err);
    cfg.mode = (pl_pool_mode)9;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "mode 9", err);
    cfg.mode = PL_POOL_GROWABLE;
    pl_kv_storage_ops half = {NULL, NULL, NULL, NULL};
    cfg.storage = &half;
    CHECK_ERR(pl_page_pool_create(&cfg, &p, err, sizeof err), PL_ERR_INVALID, "storage ops", err);
    cfg.storage = NULL;
    CHECK(p == NULL);
    CHECK_OK(pl_page_pool_create(&cfg, &p, err, sizeof err), err);
    int32_t id;
    CHECK_ERR(pl_page_pool_alloc(NULL, &id, err, sizeof err), PL_ERR_INVALID, "pool", err);
    CHECK_ERR(pl_page_pool_alloc(p, NULL, err, sizeof err), PL_ERR_INVALID, "page_id", err);
    CHECK_ERR(pl_page_pool_free(p, -1, err, sizeof err), PL_ERR_INVALID, "out of range", err);
    CHECK_ERR(pl_page_pool_free(NULL, 0, err, sizeof err), PL_ERR_INVALID, "pool", err);
    CHECK_ERR(pl_page_pool_reset(NULL, err, sizeof err), PL_ERR_INVALID, "pool", err);
    float k[2 * 4 * 5] = {0}, v[2 * 4 * 5] = {0};
    pl_kv_chunk ch = {PL_F32, 5, 2, 4, k, v, 0};
    CHECK_OK(pl_page_pool_alloc(p, &id, err, sizeof err), err);
    CHECK_ERR(pl_page_pool_write(p, id, 0, &ch, 0, 5, err, sizeof err), PL_ERR_INVALID, "cannot exceed one physical page", err);
    CHECK_ERR(pl_page_pool_write(p, id, 2, &ch, 0, 3, err, sizeof err), PL_ERR_INVALID, "outside page storage", err);
    CHECK_ERR(pl_page_pool_write(p, 5, 0, &ch, 0, 1, err, sizeof err), PL_ERR_INVALID, "out of range", err);
    CHECK_ERR(pl_page_pool_write(p, id, 0, &ch, 4, 2, err, sizeof err), PL_ERR_INVALID, "outside the chunk", err);
    CHECK_ERR(pl_page_pool_write(p, id, 0, NULL, 0, 1, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    CHECK_OK(pl_page_pool_write(p, id, 1, &ch, 0, 3, err, sizeof err), err);
    CHECK_OK(pl_page_pool_free(p, id, err, sizeof err), err);
    CHECK_ERR(pl_page_pool_write(p, id, 0, &ch, 0, 1, err, sizeof err), PL_ERR_INVALID, "is free", err);
    pl_seq_cache c;
    pl_seq_cache_init(&c, NULL);
    CHECK_ERR(pl_seq_cache_append(&c, &ch, err, sizeof err), PL_ERR_INVALID, "no pool", err);
    CHECK_ERR(pl_seq_cache_append(NULL, &ch, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    pl_seq_cache_init(&c, p);
    CHECK_ERR(pl_seq_cache_append(&c, NULL, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    CHECK_ERR(pl_seq_cache_reserve(&c, -2, err, sizeof err), PL_ERR_INVALID, "nonnegative, got -2", err);
    CHECK_ERR(pl_seq_cache_commit(&c, 1, err, sizeof err), PL_ERR_INVALID, "reserved", err);
    CHECK_ERR(pl_seq_cache_gather(&c, NULL, v, err, sizeof err), PL_ERR_INVALID, "NULL", err);
    CHECK(pl_seq_cache_tail_slots(&c) == 0);
    CHECK_OK(pl_seq_cache_append(&c, &ch, err, sizeof err), err);
    CHECK(pl_seq_cache_tail_slots(&c) == 3);
    pl_seq_cache_destroy(&c);
    pl_kv_pools pools;
    CHECK_ERR(pl_kv_pools_create(&cfg, 0, &pools, err, sizeof err), PL_ERR_INVALID, "num_layers", err);
    pl_kv_seq s;
    CHECK_ERR(pl_kv_seq_init(&s, NULL, err, sizeof err), PL_ERR_INVALID, "pools", err);
    CHECK_ERR(pl_kv_seq_reserve(NULL, 1, err, sizeof err), PL_ERR_INVALID, "seq", err);
    pl_page_pool_destroy(p);
    CHECK(strcmp(pl_status_name(PL_ERR_NO_PAGES), "PL_ERR_NO_PAGES") == 0);
}

int main(void) {
    test_paged_matches_dense();
    test_pool_reuses_freed_pages();
    test_rejects_mismatch_without_mutating();
    test_rollback_on_failed_write();
    test_growth_and_reset();
    test_rewind();
    test_batch_metadata();
    test_capped_exhaustion();
    test_layers_in_lockstep();
    test_argument_checks();
    TEST_END();
}
