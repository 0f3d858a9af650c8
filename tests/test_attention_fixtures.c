/* The seed's fixtures (spec 6.2 / 6.3) built through the page pool and sequence caches, for
 * every schedule that accepts the shape, against a dense readable causal attention over the
 * gathered K/V (an oracle independent of the REFERENCE schedule), at every SIMD level. */
#include "attn_testlib.h"
#include "pagellm/kv.h"
#include "test_util.h"

typedef struct fx {
    pl_dtype dt;
    int hq, hkv, D, ps;
    pl_page_pool *pool;
    pl_mt19937 rng;
} fx;

static void fx_init(fx *f, pl_dtype dt, int hq, int hkv, int D, int ps, uint64_t seed) {
    char err[256];
    f->dt = dt, f->hq = hq, f->hkv = hkv, f->D = D, f->ps = ps;
    pl_page_pool_config cfg = {dt, hkv, ps, D, PL_POOL_GROWABLE, 0, NULL};
    CHECK_OK(pl_page_pool_create(&cfg, &f->pool, err, sizeof err), err);
    pl_mt_seed(&f->rng, seed);
}

/* Appends n random tokens to seq. */
static void fx_append(fx *f, pl_seq_cache *seq, int n) {
    char err[256];
    size_t cnt = (size_t)n * f->hkv * f->D, es = at_esize(f->dt);
    void *k = malloc(cnt * es), *v = malloc(cnt * es);
    for (size_t i = 0; i < cnt; i++) {
        at_set(k, f->dt, i, (float)pl_mt_normal(&f->rng));
        at_set(v, f->dt, i, (float)pl_mt_normal(&f->rng));
    }
    pl_kv_chunk c = {f->dt, n, f->hkv, f->D, k, v, 0};
    CHECK_OK(pl_seq_cache_append(seq, &c, err, sizeof err), err);
    free(k), free(v);
}

/* Poisons every slot of the pool's storage that no listed row may read: slots past each
 * live sequence's offset in its tail page, and pages no sequence owns. */
static void fx_poison(fx *f, const pl_seq_cache *const *rows, int n) {
    pl_page_pool_stats st;
    pl_page_pool_get_stats(f->pool, &st);
    void *K = pl_page_pool_keys(f->pool), *V = pl_page_pool_values(f->pool);
    size_t per_page = (size_t)f->hkv * f->ps * f->D;
    for (int id = 0; id < st.capacity_pages; id++) {
        /* the valid prefix of page id, if a listed row owns it */
        int valid = 0, owned = 0;
        for (int r = 0; r < n; r++) {
            if (!rows[r]) continue;
            for (int i = 0; i < rows[r]->num_pages; i++)
                if (rows[r]->page_ids[i] == id) owned = 1, valid = rows[r]->page_lens[i];
        }
        if (owned == 0 && pl_page_pool_is_live(f->pool, id)) continue; /* other sequences' data */
        for (int h = 0; h < f->hkv; h++)
            for (int s = valid; s < f->ps; s++)
                for (int d = 0; d < f->D; d++) {
                    size_t idx = (size_t)id * per_page + ((size_t)h * f->ps + s) * f->D + d;
                    at_set(K, f->dt, idx, NAN);
                    at_set(V, f->dt, idx, NAN);
                }
    }
}

/* Dense readable causal grouped attention for one row over its gathered K/V. */
static void dense_row(fx *f, const pl_seq_cache *seq, const void *q, int L, int b, void *out) {
    char err[256];
    int ctx = seq->offset, D = f->D, G = f->hq / f->hkv;
    size_t n = (size_t)f->hkv * ctx * D, es = at_esize(f->dt);
    void *k = malloc(n * es), *v = malloc(n * es);
    CHECK_OK(pl_seq_cache_gather(seq, k, v, err, sizeof err), err);
    double scale = 1.0 / sqrt((double)D), *p = malloc(sizeof(double) * (size_t)ctx), *acc = malloc(sizeof(double) * D);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < f->hq; h++) {
            size_t qo = (((size_t)b * L + l) * f->hq + h) * D;
            int kv = h / G, vis = ctx - L + l + 1;
            double mx = -INFINITY, sum = 0;
            for (int s = 0; s < vis; s++) {
                double dot = 0;
                for (int d = 0; d < D; d++) dot += at_get(q, f->dt, qo + d) * at_get(k, f->dt, ((size_t)kv * ctx + s) * D + d);
                p[s] = dot * scale;
                mx = p[s] > mx ? p[s] : mx;
            }
            for (int d = 0; d < D; d++) acc[d] = 0;
            for (int s = 0; s < vis; s++) {
                double e = exp(p[s] - mx);
                sum += e;
                for (int d = 0; d < D; d++) acc[d] += e * at_get(v, f->dt, ((size_t)kv * ctx + s) * D + d);
            }
            for (int d = 0; d < D; d++) at_set(out, f->dt, qo + d, (float)(acc[d] / sum));
        }
    free(k), free(v), free(p), free(acc);
}

/* Runs every schedule accepting the shape at every SIMD level on the batch of rows (NULL =
 * empty slot) with an L-token causal query; checks against the dense oracle. */
static void fx_check(fx *f, const pl_seq_cache *const *rows, int batch, int L, const char *name) {
    char err[256];
    int maxp = pl_kv_max_pages(rows, batch);
    if (maxp < 1) maxp = 1;
    int32_t *bt = malloc(sizeof(int32_t) * (size_t)batch * maxp), *ctx = malloc(sizeof(int32_t) * (size_t)batch);
    CHECK_OK(pl_kv_build_batch(rows, batch, NULL, maxp, bt, ctx, err, sizeof err), err);
    fx_poison(f, rows, batch);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(f->pool, &st);
    size_t qn = (size_t)batch * L * f->hq * f->D, es = at_esize(f->dt);
    void *q = malloc(qn * es), *want = malloc(qn * es);
    unsigned char *got = malloc(qn * es + 64);
    for (size_t i = 0; i < qn; i++) at_set(q, f->dt, i, (float)pl_mt_normal(&f->rng));
    memset(want, 0, qn * es);
    for (int b = 0; b < batch; b++)
        if (rows[b]) dense_row(f, rows[b], q, L, b, want);
    pl_paged_attention_args a = {f->dt, batch, f->hq, f->hkv, L, f->D, st.num_pages, f->ps, maxp, 0.0f, 1,
                                 q, pl_page_pool_keys(f->pool), pl_page_pool_values(f->pool), bt, ctx, got,
                                 PL_ATTN_AUTO};
    at_problem view; /* for at_close */
    memset(&view, 0, sizeof view);
    view.a = a;
    view.q_elems = qn;
    const pl_attn_schedule scheds[] = {PL_ATTN_AUTO, PL_ATTN_REFERENCE, PL_ATTN_SCALAR, PL_ATTN_DECODE, PL_ATTN_FLASH};
    int best = pl_attn_simd_detect();
    for (int si = 0; si < 5; si++) {
        if (scheds[si] == PL_ATTN_DECODE && L > 8) continue;
        for (int lvl = 0; lvl <= best; lvl++) {
            memset(got + qn * es, 0xa5, 64); /* guard: the output stays in its dtype's size */
            a.schedule = scheds[si];
            at_fill_nan(got, f->dt, qn);
            CHECK_OK(pl_paged_attention_simd(&a, lvl, err, sizeof err), err);
            double e;
            CHECK_MSG(at_close(&view, got, want, &e), "%s: schedule %d level %s max err %g", name, (int)scheds[si],
                      pl_attn_simd_name(lvl), e);
            int guard_ok = 1;
            for (int i = 0; i < 64; i++) guard_ok &= got[qn * es + i] == 0xa5;
            CHECK_MSG(guard_ok, "%s: wrote past the output", name);
            if (scheds[si] == PL_ATTN_REFERENCE || scheds[si] == PL_ATTN_SCALAR) break; /* no SIMD levels */
        }
    }
    free(bt), free(ctx), free(q), free(want), free(got);
}

/* spec 6.3: 64 tokens (pages 0, 1), a blocker takes page 2, then an L-token chunk: pages
 * 0, 1, 3, ... (non-consecutive); then causal decode after the paged prefill. */
static void flash_noncontiguous(int L) {
    fx f;
    fx_init(&f, PL_BF16, 4, 2, 128, 32, 100 + (uint64_t)L);
    pl_seq_cache seq, blocker;
    pl_seq_cache_init(&seq, f.pool);
    pl_seq_cache_init(&blocker, f.pool);
    fx_append(&f, &seq, 64);
    fx_append(&f, &blocker, 1);
    fx_append(&f, &seq, L);
    CHECK(seq.offset == 64 + L);
    CHECK(seq.page_ids[0] == 0 && seq.page_ids[1] == 1 && seq.page_ids[2] == 3);
    if (L == 65) CHECK(seq.num_pages == 5 && seq.page_ids[3] == 4 && seq.page_ids[4] == 5);
    const pl_seq_cache *rows[1] = {&seq};
    char name[64];
    snprintf(name, sizeof name, "flash_noncontiguous L=%d", L);
    fx_check(&f, rows, 1, L, name);
    fx_append(&f, &seq, 1); /* causal decode after the paged prefill */
    snprintf(name, sizeof name, "decode after prefill L=%d", L);
    fx_check(&f, rows, 1, 1, name);
    char err[256];
    CHECK_OK(pl_seq_cache_release(&seq, err, sizeof err), err);
    CHECK_OK(pl_seq_cache_release(&blocker, err, sizeof err), err);
    pl_seq_cache_destroy(&seq);
    pl_seq_cache_destroy(&blocker);
    pl_page_pool_destroy(f.pool);
}

int main(void) {
    char err[256];
    /* 6.2 task 1: f32, page 4, H_kv 2, D 4, GQA 2; 3 tokens then a 3-token causal chunk */
    {
        fx f;
        fx_init(&f, PL_F32, 4, 2, 4, 4, 1);
        pl_seq_cache s;
        pl_seq_cache_init(&s, f.pool);
        fx_append(&f, &s, 3);
        fx_append(&f, &s, 3);
        CHECK(s.num_pages == 2 && s.page_ids[0] == 0 && s.page_ids[1] == 1 && s.offset == 6);
        const pl_seq_cache *rows[1] = {&s};
        fx_check(&f, rows, 1, 3, "day4 task1");
        CHECK_OK(pl_seq_cache_release(&s, err, sizeof err), err);
        pl_seq_cache_destroy(&s);
        pl_page_pool_destroy(f.pool);
    }
    /* 6.2 task 2: one pool; 3 and 6 tokens in slots 0 and 2 of a 3-slot batch, one-token append */
    {
        fx f;
        fx_init(&f, PL_F32, 4, 2, 4, 4, 2);
        pl_seq_cache s0, s2;
        pl_seq_cache_init(&s0, f.pool);
        pl_seq_cache_init(&s2, f.pool);
        fx_append(&f, &s0, 3);
        fx_append(&f, &s2, 6);
        fx_append(&f, &s0, 1);
        fx_append(&f, &s2, 1);
        const pl_seq_cache *rows[3] = {&s0, NULL, &s2};
        int32_t bt[6], ctx[3];
        CHECK(pl_kv_max_pages(rows, 3) == 2);
        CHECK_OK(pl_kv_build_batch(rows, 3, NULL, 2, bt, ctx, err, sizeof err), err);
        CHECK(ctx[0] == 4 && ctx[1] == 0 && ctx[2] == 7 && bt[2] == -1 && bt[3] == -1);
        fx_check(&f, rows, 3, 1, "day4 task2 batched");
        CHECK_OK(pl_seq_cache_release(&s0, err, sizeof err), err);
        CHECK_OK(pl_seq_cache_release(&s2, err, sizeof err), err);
        pl_seq_cache_destroy(&s0);
        pl_seq_cache_destroy(&s2);
        pl_page_pool_destroy(f.pool);
    }
    /* 6.2 bf16 decode: page 32, D 128, H 8 / 2; 64 tokens, a blocker, one more: ids 0, 1, 3 */
    {
        fx f;
        fx_init(&f, PL_BF16, 8, 2, 128, 32, 3);
        pl_seq_cache s, blk;
        pl_seq_cache_init(&s, f.pool);
        pl_seq_cache_init(&blk, f.pool);
        fx_append(&f, &s, 64);
        fx_append(&f, &blk, 1);
        fx_append(&f, &s, 1);
        CHECK(s.num_pages == 3 && s.page_ids[2] == 3);
        const pl_seq_cache *rows[1] = {&s};
        fx_check(&f, rows, 1, 1, "day4 bf16 decode");
        CHECK_OK(pl_seq_cache_release(&s, err, sizeof err), err);
        CHECK_OK(pl_seq_cache_release(&blk, err, sizeof err), err);
        pl_seq_cache_destroy(&s);
        pl_seq_cache_destroy(&blk);
        pl_page_pool_destroy(f.pool);
    }
    /* a context inside one page (decode and prefill), both dtypes */
    for (int dt = 0; dt < 2; dt++) {
        fx f;
        fx_init(&f, (pl_dtype)dt, 4, 1, dt ? 128 : 64, 32, 4);
        pl_seq_cache s;
        pl_seq_cache_init(&s, f.pool);
        fx_append(&f, &s, 20);
        const pl_seq_cache *rows[1] = {&s};
        fx_check(&f, rows, 1, 12, "one page prefill");
        fx_check(&f, rows, 1, 1, "one page decode");
        CHECK_OK(pl_seq_cache_release(&s, err, sizeof err), err);
        pl_seq_cache_destroy(&s);
        pl_page_pool_destroy(f.pool);
    }
    /* tiles crossing page boundaries: page sizes not a multiple of the 32-key tile */
    for (int ps = 16; ps <= 48; ps += 32) {
        fx f;
        fx_init(&f, PL_BF16, 8, 2, 128, ps, 5);
        pl_seq_cache s, blk;
        pl_seq_cache_init(&s, f.pool);
        pl_seq_cache_init(&blk, f.pool);
        fx_append(&f, &s, 40);
        fx_append(&f, &blk, 3);
        fx_append(&f, &s, 33);
        const pl_seq_cache *rows[1] = {&s};
        fx_check(&f, rows, 1, 33, "tile crossing pages");
        CHECK_OK(pl_seq_cache_release(&s, err, sizeof err), err);
        CHECK_OK(pl_seq_cache_release(&blk, err, sizeof err), err);
        pl_seq_cache_destroy(&s);
        pl_seq_cache_destroy(&blk);
        pl_page_pool_destroy(f.pool);
    }
    flash_noncontiguous(9);
    flash_noncontiguous(65);
    TEST_END();
}
