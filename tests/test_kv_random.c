/* Randomized state-machine test of the paged KV cache: thousands of append / reserve /
 * release / rewind operations (some failing by budget or injected write errors) over several
 * sequences, checked after every step against a plain dense copy of each sequence. */
#include "kv_test_util.h"
#include "test_util.h"

#define NSEQ 5
#define MAXTOK 4096

static char err[512];

typedef struct dense_seq {
    float *k, *v; /* token-major [MAXTOK, H, D], values exactly representable in the dtype */
    int len;
} dense_seq;

static int check_all(pl_page_pool *pool, pl_seq_cache *caches, dense_seq *dense, int H, int D, pl_dtype dt) {
    int ok = 1, pages = 0;
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    uint8_t *owner = calloc((size_t)st.num_pages + 1, 1);
    for (int s = 0; s < NSEQ; s++) {
        pl_seq_cache *c = &caches[s];
        if (pl_seq_cache_check(c, err, sizeof err) != PL_OK) {
            fprintf(stderr, "seq %d: %s\n", s, err);
            ok = 0;
        }
        if (c->offset != dense[s].len) ok = 0;
        for (int i = 0; i < c->num_pages; i++) {
            int id = c->page_ids[i];
            if (id < 0 || id >= st.num_pages || owner[id]) ok = 0; /* a page owned twice */
            else owner[id] = 1;
        }
        pages += c->num_pages;
        if (c->offset > 0) {
            size_t n = (size_t)H * (size_t)c->offset * (size_t)D, es = dt == PL_BF16 ? 2 : 4;
            char *gk = malloc(n * es), *gv = malloc(n * es);
            if (pl_seq_cache_gather(c, gk, gv, err, sizeof err) != PL_OK) ok = 0;
            for (int h = 0; ok && h < H; h++)
                for (int t = 0; t < c->offset; t++)
                    for (int d = 0; d < D; d++) {
                        size_t gi = ((size_t)h * c->offset + t) * D + d, di = ((size_t)t * H + h) * D + d;
                        float a = dt == PL_BF16 ? pl_bf16_to_f32(((uint16_t *)gk)[gi]) : ((float *)gk)[gi];
                        float b = dt == PL_BF16 ? pl_bf16_to_f32(((uint16_t *)gv)[gi]) : ((float *)gv)[gi];
                        if (a != dense[s].k[di] || b != dense[s].v[di]) ok = 0;
                    }
            free(gk);
            free(gv);
        }
    }
    if (st.live_pages != pages || st.live_pages + st.free_pages != st.num_pages) ok = 0;
    free(owner);
    return ok;
}

static void run(pl_pool_mode mode, pl_dtype dt, int ps, uint64_t seed, int steps) {
    const int H = 2, D = 3;
    pl_mt19937 rng;
    pl_mt_seed(&rng, seed);
    pl_page_pool_config cfg = {dt, H, ps, D, mode, mode == PL_POOL_CAPPED ? 12 : 0, NULL};
    pl_page_pool *pool;
    CHECK_OK(pl_page_pool_create(&cfg, &pool, err, sizeof err), err);
    pl_seq_cache caches[NSEQ];
    dense_seq dense[NSEQ];
    for (int s = 0; s < NSEQ; s++) {
        pl_seq_cache_init(&caches[s], pool);
        dense[s].k = malloc(sizeof(float) * MAXTOK * H * D);
        dense[s].v = malloc(sizeof(float) * MAXTOK * H * D);
        dense[s].len = 0;
    }
    size_t es = dt == PL_BF16 ? 2 : 4;
    char *kbuf = malloc((size_t)(4 * ps + 8) * H * D * es), *vbuf = malloc((size_t)(4 * ps + 8) * H * D * es);
    float *kf = malloc(sizeof(float) * (size_t)(4 * ps + 8) * H * D), *vf = malloc(sizeof(float) * (size_t)(4 * ps + 8) * H * D);
    int ok_steps = 0, no_pages = 0, injected = 0, failures_checked = 0;
    for (int step = 0; step < steps; step++) {
        int s = (int)pl_mt_randint(&rng, 0, NSEQ - 1);
        pl_seq_cache *c = &caches[s];
        int op = (int)pl_mt_randint(&rng, 0, 9);
        kvt_snapshot before, after;
        kvt_snap(c, &before);
        int rc = PL_OK;
        if (op <= 5) { /* append, sometimes after a reservation, sometimes with a failing write */
            int n = (int)pl_mt_randint(&rng, 1, 2 * ps + 3);
            if (dense[s].len + n > MAXTOK) n = MAXTOK - dense[s].len;
            if (n <= 0) continue;
            for (int i = 0; i < n * H * D; i++) {
                float a = (float)pl_mt_normal(&rng), b = (float)pl_mt_normal(&rng);
                if (dt == PL_BF16) {
                    ((uint16_t *)kbuf)[i] = pl_f32_to_bf16(a), ((uint16_t *)vbuf)[i] = pl_f32_to_bf16(b);
                    kf[i] = pl_bf16_round(a), vf[i] = pl_bf16_round(b);
                } else {
                    ((float *)kbuf)[i] = kf[i] = a, ((float *)vbuf)[i] = vf[i] = b;
                }
            }
            int inject = pl_mt_randint(&rng, 0, 19) == 0;
            if (op == 5) {
                rc = pl_seq_cache_reserve(c, n, err, sizeof err);
                if (rc == PL_OK) {
                    kvt_snap(c, &before); /* the reservation itself is the new baseline */
                }
            }
            if (rc == PL_OK) {
                if (inject) pl_page_pool_inject_write_failure(pool, (int)pl_mt_randint(&rng, 1, 2));
                pl_kv_chunk ch = {dt, n, H, D, kbuf, vbuf, 0};
                rc = pl_seq_cache_append(c, &ch, err, sizeof err);
                pl_page_pool_inject_write_failure(pool, 0);
            }
            if (rc == PL_OK) {
                memcpy(dense[s].k + (size_t)dense[s].len * H * D, kf, sizeof(float) * (size_t)n * H * D);
                memcpy(dense[s].v + (size_t)dense[s].len * H * D, vf, sizeof(float) * (size_t)n * H * D);
                dense[s].len += n;
            } else {
                if (rc == PL_ERR_NO_PAGES) no_pages++;
                else if (rc == PL_ERR_IO) injected++;
                else CHECK_MSG(0, "unexpected status %d: %s", rc, err);
                kvt_snap(c, &after);
                CHECK(kvt_same(&before, &after));
                failures_checked++;
            }
        } else if (op <= 7) {
            int n = dense[s].len ? (int)pl_mt_randint(&rng, 0, dense[s].len) : 0;
            CHECK_OK(pl_seq_cache_rewind(c, n, err, sizeof err), err);
            dense[s].len -= n;
        } else {
            CHECK_OK(pl_seq_cache_release(c, err, sizeof err), err);
            dense[s].len = 0;
        }
        if (!check_all(pool, caches, dense, H, D, dt)) {
            CHECK_MSG(0, "state diverged at step %d (mode %d dtype %d page %d)", step, (int)mode, (int)dt, ps);
            break;
        }
        ok_steps++;
    }
    for (int s = 0; s < NSEQ; s++) CHECK_OK(pl_seq_cache_release(&caches[s], err, sizeof err), err);
    pl_page_pool_stats st;
    pl_page_pool_get_stats(pool, &st);
    CHECK(st.live_pages == 0 && st.free_pages == st.num_pages);
    if (mode == PL_POOL_CAPPED) CHECK(no_pages > 0);
    CHECK(injected > 0);
    CHECK(ok_steps == steps || pl_test_failures > 0);
    printf("mode %d dtype %d page %d: %d steps, %d budget refusals, %d injected failures, %d rollbacks checked\n", (int)mode,
           (int)dt, ps, ok_steps, no_pages, injected, failures_checked);
    for (int s = 0; s < NSEQ; s++) {
        pl_seq_cache_destroy(&caches[s]);
        free(dense[s].k);
        free(dense[s].v);
    }
    free(kbuf), free(vbuf), free(kf), free(vf);
    pl_page_pool_destroy(pool);
}

int main(void) {
    const int sizes[4] = {1, 3, 4, 16};
    uint64_t seed = 100;
    for (int m = 0; m < 2; m++)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < 4; i++) run((pl_pool_mode)m, (pl_dtype)dt, sizes[i], seed++, 1500);
    TEST_END();
}
