/* Randomized differential test: every schedule at every SIMD level this CPU has, against
 * REFERENCE, over page sizes, query lengths, contexts, head dims, GQA groups, inactive rows,
 * causal on/off and both dtypes, with NaN in every byte attention must not read. */
#include "attn_testlib.h"
#include "test_util.h"

int main(void) {
    const int page_sizes[] = {1, 3, 16, 32, 128, 256};
    const int head_dims[] = {64, 128, 20};
    const char *san = getenv("PAGELLM_SANITIZED");
    int iters = san && san[0] == '1' ? 12 : 48;
    int best = pl_attn_simd_detect();
    pl_mt19937 rng;
    pl_mt_seed(&rng, 20260311);
    char err[256];
    for (int it = 0; it < iters; it++) {
        pl_dtype dt = it % 2 ? PL_BF16 : PL_F32;
        int ps = page_sizes[it % 6];
        int D = head_dims[(it / 6) % 3];
        int hkv = (int)pl_mt_randint(&rng, 1, 2), G = (int)pl_mt_randint(&rng, 1, 8);
        int batch = (int)pl_mt_randint(&rng, 1, 3);
        int causal = (int)pl_mt_randint(&rng, 0, 1);
        int decode = it % 3 != 2;
        int L = decode ? (int)pl_mt_randint(&rng, 1, 8) : (int)pl_mt_randint(&rng, 9, 300);
        /* keep the float64 oracle cheap: long contexts with short queries */
        int max_ctx = decode ? (it % 4 == 0 ? 3000 : 1200) : (L > 100 ? 500 : 1000);
        if (ps == 1 && max_ctx > 400) max_ctx = 400;
        int ctx[3];
        for (int b = 0; b < batch; b++) {
            ctx[b] = (int)pl_mt_randint(&rng, L, max_ctx > L ? max_ctx : L);
            if (batch > 1 && pl_mt_randint(&rng, 0, 3) == 0) ctx[b] = 0; /* inactive row */
        }
        at_problem p;
        at_build(&p, dt, batch, hkv * G, hkv, L, D, ps, ctx, causal, (int)pl_mt_randint(&rng, 0, 3),
                 (int)pl_mt_randint(&rng, 0, 2), 1000 + (uint64_t)it);
        if (it % 4 == 1) p.a.scale = 0.3f; /* an explicit scale; 0 (the default) elsewhere */
        size_t bytes = p.q_elems * at_esize(dt);
        void *ref = malloc(bytes), *got = malloc(bytes);
        CHECK_OK(at_run(&p, PL_ATTN_REFERENCE, PL_SIMD_AUTO, ref, err, sizeof err), err);
        const pl_attn_schedule scheds[] = {PL_ATTN_SCALAR, PL_ATTN_DECODE, PL_ATTN_FLASH, PL_ATTN_AUTO};
        for (int si = 0; si < 4; si++) {
            pl_attn_schedule s = scheds[si];
            if (s == PL_ATTN_SCALAR && it % 2) continue; /* the slow control: every other case */
            for (int lvl = s == PL_ATTN_SCALAR ? best : 0; lvl <= best; lvl++) {
                /* lower levels on every third case keeps the runtime small */
                if (lvl < best && it % 3 != 0) continue;
                int rc = at_run(&p, s, lvl, got, err, sizeof err);
                if (s == PL_ATTN_DECODE && L > 8) {
                    CHECK_MSG(rc == PL_ERR_UNSUPPORTED, "decode L=%d rc %d", L, rc);
                    continue;
                }
                CHECK_MSG(rc == PL_OK, "it %d sched %d lvl %d: %s", it, (int)s, lvl, err);
                double e;
                int ok = at_close(&p, got, ref, &e);
                CHECK_MSG(ok, "it %d sched %d lvl %s: dt %d B %d hq %d hkv %d L %d D %d ps %d causal %d ctx %d,%d,%d max err %g",
                          it, (int)s, pl_attn_simd_name(lvl), (int)dt, batch, hkv * G, hkv, L, D, ps, causal, ctx[0],
                          batch > 1 ? ctx[1] : -1, batch > 2 ? ctx[2] : -1, e);
            }
        }
        free(ref), free(got);
        at_free(&p);
    }
    TEST_END();
}
