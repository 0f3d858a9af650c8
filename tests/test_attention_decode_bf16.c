/* The fused bf16 decode kernel (head_dim 128, AVX512_BF16) against REFERENCE: GQA groups of
 * 1-8 (row groups of 4 padded or several per head), 1-8 KV heads (head groups when the rows
 * exceed the kernel's limit), query lengths 1-8 (causal masks inside a block), page sizes
 * that split blocks (1, 3, 16, 48, 128, 256), context splits at 1-5 threads, inactive rows,
 * NaN in every byte attention must not read. On CPUs without AVX512_BF16 it checks the
 * DECODE path the level has. */
#include <omp.h>

#include "attn_testlib.h"
#include "test_util.h"

int main(void) {
    const int page_sizes[] = {128, 16, 256, 3, 48, 1};
    const int groups[] = {4, 1, 2, 3, 5, 8};
    const int kv_heads[] = {8, 1, 2, 3};
    const int threads[] = {1, 2, 5};
    const char *san = getenv("PAGELLM_SANITIZED");
    int iters = san && san[0] == '1' ? 12 : 40;
    int best = pl_attn_simd_detect();
    pl_mt19937 rng;
    pl_mt_seed(&rng, 20261129);
    char err[256];
    for (int it = 0; it < iters; it++) {
        int ps = page_sizes[it % 6], G = groups[(it / 2) % 6], hkv = kv_heads[(it / 3) % 4];
        int L = it % 5 == 0 ? (int)pl_mt_randint(&rng, 2, 8) : 1;
        if (it % 7 == 3) L = 8, G = 8; /* 64 rows per head: several row groups, head groups */
        int batch = (int)pl_mt_randint(&rng, 1, 4), causal = (int)pl_mt_randint(&rng, 0, 1);
        int max_ctx = ps == 1 ? 300 : (hkv * G > 16 ? 900 : 2500);
        int ctx[4];
        for (int b = 0; b < batch; b++) {
            ctx[b] = (int)pl_mt_randint(&rng, L, max_ctx);
            if (b == 0 && it % 4 == 1) ctx[b] = L + (int)pl_mt_randint(&rng, 0, 5); /* a few keys only */
            if (batch > 1 && pl_mt_randint(&rng, 0, 4) == 0) ctx[b] = 0;            /* inactive row */
        }
        at_problem p;
        at_build(&p, PL_BF16, batch, hkv * G, hkv, L, 128, ps, ctx, causal, (int)pl_mt_randint(&rng, 0, 3),
                 (int)pl_mt_randint(&rng, 0, 2), 5000 + (uint64_t)it);
        if (it % 3 == 1) p.a.scale = 0.05f;
        size_t bytes = p.q_elems * at_esize(PL_BF16);
        void *ref = malloc(bytes), *got = malloc(bytes);
        CHECK_OK(at_run(&p, PL_ATTN_REFERENCE, PL_SIMD_AUTO, ref, err, sizeof err), err);
        for (int ti = 0; ti < 3; ti++) {
            omp_set_num_threads(threads[ti]);
            int rc = at_run(&p, PL_ATTN_DECODE, best, got, err, sizeof err);
            CHECK_MSG(rc == PL_OK, "it %d: %s", it, err);
            double e;
            int ok = at_close(&p, got, ref, &e);
            CHECK_MSG(ok, "it %d threads %d lvl %s: B %d hq %d hkv %d L %d ps %d causal %d ctx %d,%d,%d,%d max err %g", it,
                      threads[ti], pl_attn_simd_name(best), batch, hkv * G, hkv, L, ps, causal, ctx[0],
                      batch > 1 ? ctx[1] : -1, batch > 2 ? ctx[2] : -1, batch > 3 ? ctx[3] : -1, e);
        }
        free(ref), free(got);
        at_free(&p);
    }
    TEST_END();
}
