/* The serving engine's three KV modes on a CUDA model (issue 8): dense and paged-gather
 * keep their caches, padded decode batches and gathered K/V in device memory and run the
 * readable attention kernel (or the fused operator, as on the CPU), paged runs the paged
 * kernels. On a synthetic model, greedy, benchmark mode:
 *   - every mode finishes every request with its full length, no page or dense byte leaks;
 *   - the GPU modes emit the same tokens as each other (f32: all but a rare position; bf16:
 *     the first token of most requests and most positions, where a rounding flip of a
 *     near-tie ends the comparison of its request early; the agreed fractions are printed);
 *   - the copy counters and peaks of every mode equal the CPU run's (the schedule does not
 *     depend on the tokens: EOS is ignored and every request runs to its length);
 *   - under a capped KV budget every mode preempts, recomputes and finishes every request on
 *     the GPU, with the CPU run's counters.
 * PL_CUDA_TEST_BIG=1 adds a timing run of the three modes on a qwen3-0.6b-shape model (batch
 * 4, contexts ~1000). Exits 77 (skip) without CUDA or a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PL_HAVE_CUDA
int main(void) {
    printf("SKIP: pagellm built without CUDA\n");
    return 77;
}
#else
#include "base/timing.h"
#include "cuda/backend_cuda.h"
#include "engine_test_util.h"
#include "test_util.h"

static char err[512];

static const char *mode_name(int mode) { return pl_kv_mode_name((pl_kv_mode)mode); }

static pl_model *make_model(const char *shape, uint64_t seed, pl_dtype dt, pl_device dev) {
    pl_model_options o = {dt, dev, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, seed, &o, &m, err, sizeof err), err);
    return m;
}

/* Tokens of request i that a and b emit alike before their first difference. */
static int common_prefix(const run_out *a, const run_out *b, int i) {
    int n = a->num_tokens[i] < b->num_tokens[i] ? a->num_tokens[i] : b->num_tokens[i], k = 0;
    if (!a->tokens[i] || !b->tokens[i]) return 0;
    while (k < n && a->tokens[i][k] == b->tokens[i][k]) k++;
    return k;
}

/* Fraction of b's tokens that a matches up to each request's first difference (after it the
 * contexts differ, so later positions say nothing); *same: requests with identical tokens;
 * *first: requests whose first token (the prefill's, same context in both) agrees. */
static double agreement(const run_out *a, const run_out *b, int *same, int *first) {
    int64_t agree = 0, total = 0;
    *same = *first = 0;
    for (int i = 0; i < b->n; i++) {
        int k = common_prefix(a, b, i);
        agree += k;
        total += b->num_tokens[i];
        *same += k == b->num_tokens[i] && a->num_tokens[i] == b->num_tokens[i];
        *first += k > 0;
    }
    return total ? (double)agree / (double)total : 1.0;
}

/* The counters and peaks that depend on the schedule only: equal on both devices. */
static void check_counters(const char *what, const pl_engine_metrics *g, const pl_engine_metrics *c) {
#define SAME(f)                                                                                                   \
    CHECK_MSG(g->f == c->f, "%s: " #f " %lld on the GPU, %lld on the CPU", what, (long long)g->f, (long long)c->f)
    SAME(dense_growth_copy_bytes);
    SAME(dense_staging_copy_bytes);
    SAME(gather_prefill_copy_bytes);
    SAME(paged_growth_copy_bytes);
    SAME(peak_kv_bytes);
    SAME(peak_dense_bytes);
    SAME(peak_paged_bytes);
    SAME(peak_live_pages);
    SAME(peak_capacity_pages);
    SAME(storage_growths);
    SAME(copied_pages_on_growth);
    SAME(reused_page_allocations);
    SAME(preemptions);
    SAME(prompt_tokens);
    SAME(prefill_chunks);
    SAME(decode_tokens);
    SAME(decode_calls);
    SAME(generated_tokens);
    SAME(finished_requests);
    SAME(peak_active_requests);
#undef SAME
}

static void check_complete(const char *what, const run_out *o, const pl_trace *t) {
    CHECK_MSG(o->finished == t->num_requests && o->duplicates == 0, "%s: %d of %d finished, %d duplicates", what,
              o->finished, t->num_requests, o->duplicates);
    for (int i = 0; i < t->num_requests; i++) {
        CHECK_MSG(o->finish[i] == PL_FINISH_LENGTH, "%s request %d: finish %d", what, i, (int)o->finish[i]);
        CHECK_MSG(o->num_tokens[i] == t->requests[i].max_new_tokens, "%s request %d: %d tokens, want %d", what, i,
                  o->num_tokens[i], t->requests[i].max_new_tokens);
    }
    CHECK_MSG(o->live_pages_after == 0, "%s: %lld live pages after the run", what, (long long)o->live_pages_after);
}

/* The modes of a seed-style trace (contexts on both sides of gather's 256-token switch) on the
 * GPU in dtype dt; with cpu_counters the CPU runs of the same dtype for the counters. */
static void test_modes(pl_dtype dt, double min_agree, int cpu_counters) {
    const char *dn = dt == PL_BF16 ? "bf16" : "f32";
    pl_model *g = make_model("tiny-untied", 7, dt, PL_DEVICE_CUDA);
    pl_model *c = cpu_counters ? make_model("tiny-untied", 7, dt, PL_DEVICE_CPU) : NULL;
    if (!g || (cpu_counters && !c)) {
        pl_model_free(g), pl_model_free(c);
        return;
    }
    const pl_model_config *mc = pl_model_get_config(g);
    pl_trace_config tc = {8, 64, 400, 8, 40, mc->vocab_size, mc->eos_ids[0], 0};
    pl_trace t;
    CHECK_OK(pl_trace_generate(&tc, &t, err, sizeof err), err);
    run_out r[3];
    char what[96];
    for (int mode = 0; mode < 3; mode++) {
        /* an explicit budget (never binding here) gives both devices the same capped pools:
         * a CUDA engine without one takes a fraction of the free device memory up front */
        pl_engine_config ec = {(pl_kv_mode)mode, 3, 64, 32, (size_t)64 << 20, 0, 0};
        snprintf(what, sizeof what, "%s gpu %s", dn, mode_name(mode));
        double t0 = pl_now_seconds();
        CHECK_OK(run_trace(g, &ec, &t, &r[mode], err, sizeof err), err);
        printf("  %-24s %.2f s, decode %.1f tok/s\n", what, pl_now_seconds() - t0,
               r[mode].m.decode_seconds > 0 ? (double)r[mode].m.decode_tokens / r[mode].m.decode_seconds : 0.0);
        check_complete(what, &r[mode], &t);
        CHECK(r[mode].m.preemptions == 0);
        if (cpu_counters && mode != PL_KV_PAGED) {
            run_out o;
            snprintf(what, sizeof what, "%s %s", dn, mode_name(mode));
            CHECK_OK(run_trace(c, &ec, &t, &o, err, sizeof err), err);
            check_complete(what, &o, &t);
            check_counters(what, &r[mode].m, &o.m);
            run_out_free(&o);
        }
    }
    /* copy accounting as on the CPU: dense concatenates and stages, gather stages, paged neither */
    CHECK(r[0].m.dense_growth_copy_bytes > 0 && r[0].m.dense_staging_copy_bytes > 0);
    CHECK(r[1].m.dense_growth_copy_bytes == 0 && r[1].m.dense_staging_copy_bytes == r[0].m.dense_staging_copy_bytes);
    CHECK(r[1].m.gather_prefill_copy_bytes > 0);
    CHECK(r[2].m.dense_growth_copy_bytes == 0 && r[2].m.dense_staging_copy_bytes == 0);
    CHECK(r[2].m.peak_live_pages > 0 && r[2].m.peak_live_pages == r[1].m.peak_live_pages);
    /* tokens: each pair of modes */
    const int pairs[3][2] = {{0, 2}, {1, 2}, {0, 1}};
    for (int pi = 0; pi < 3; pi++) {
        const int x = pairs[pi][0], y = pairs[pi][1];
        int same = 0, first = 0;
        double a = agreement(&r[x], &r[y], &same, &first);
        printf("  %s gpu %s vs %s: %.1f%% of tokens agree (up to a request's first difference), first token of "
               "%d and all tokens of %d of %d requests\n",
               dn, mode_name(x), mode_name(y), 100.0 * a, first, same, t.num_requests);
        CHECK_MSG(a >= min_agree, "%s gpu %s vs %s: %.3f of the tokens agree, want >= %.2f", dn, mode_name(x),
                  mode_name(y), a, min_agree);
        CHECK_MSG(4 * first >= 3 * t.num_requests, "%s gpu %s vs %s: first tokens agree in %d of %d requests", dn,
                  mode_name(x), mode_name(y), first, t.num_requests);
    }
    int distinct = 0; /* the tokens are not trivially constant */
    for (int j = 1; j < r[2].num_tokens[0]; j++) distinct += r[2].tokens[0][j] != r[2].tokens[0][0];
    CHECK(distinct > 0);
    for (int mode = 0; mode < 3; mode++) run_out_free(&r[mode]);
    pl_trace_free(&t);
    pl_model_free(c);
    pl_model_free(g);
}

/* test_engine_sched's capped-budget case on the GPU (bf16). */
static void test_budget_preemption(void) {
    pl_model *g = make_model("tiny-untied", 11, PL_BF16, PL_DEVICE_CUDA);
    pl_model *c = make_model("tiny-untied", 11, PL_BF16, PL_DEVICE_CPU);
    if (!g || !c) {
        pl_model_free(g), pl_model_free(c);
        return;
    }
    const pl_model_config *mc = pl_model_get_config(g);
    pl_trace t;
    int max_len = 0;
    size_t token_bytes = 0;
    CHECK_OK(budget_trace(mc, 2, &t, &max_len, &token_bytes, err, sizeof err), err);
    const int ps = 16;
    size_t page_all_layers = token_bytes * ps * (size_t)mc->num_layers;
    int need_pages = (max_len + ps - 1) / ps + 1;

    run_out ref;
    pl_engine_config ec = {PL_KV_PAGED, 4, 32, ps, 0, 0, 0};
    CHECK_OK(run_trace(g, &ec, &t, &ref, err, sizeof err), err);
    check_complete("uncapped gpu paged", &ref, &t);
    char what[96];
    for (int mode = 0; mode < 3; mode++) {
        run_out o, oc;
        pl_engine_config cc = {(pl_kv_mode)mode, 4, 32, ps, 0, 0, 0};
        cc.kv_budget_bytes = mode == PL_KV_DENSE ? (size_t)(6 * max_len) * token_bytes * (size_t)mc->num_layers
                                                 : (size_t)need_pages * page_all_layers;
        snprintf(what, sizeof what, "capped gpu %s", mode_name(mode));
        CHECK_OK(run_trace(g, &cc, &t, &o, err, sizeof err), err);
        CHECK_MSG(o.m.preemptions > 0, "%s: no preemption under a tight budget", what);
        check_complete(what, &o, &t);
        if (mode != PL_KV_DENSE) {
            CHECK(o.m.peak_live_pages <= (int64_t)need_pages * mc->num_layers);
            CHECK(o.m.storage_growths == 0);
        } else {
            CHECK(o.m.peak_dense_bytes <= cc.kv_budget_bytes);
        }
        snprintf(what, sizeof what, "capped %s", mode_name(mode));
        CHECK_OK(run_trace(c, &cc, &t, &oc, err, sizeof err), err);
        check_complete(what, &oc, &t);
        check_counters(what, &o.m, &oc.m);
        /* recomputed requests in other batch compositions: bf16 rounding may differ */
        int same = 0, first = 0;
        double a = agreement(&o, &ref, &same, &first);
        printf("  capped gpu %s: %lld preemptions, %.1f%% of tokens as the uncapped run, %d of %d identical\n",
               mode_name(mode), (long long)o.m.preemptions, 100.0 * a, same, t.num_requests);
        CHECK_MSG(a >= 0.5, "capped gpu %s: only %.3f of the tokens agree with the uncapped run", mode_name(mode), a);
        run_out_free(&o);
        run_out_free(&oc);
    }
    run_out_free(&ref);
    pl_trace_free(&t);
    pl_model_free(c);
    pl_model_free(g);
}

/* Cancel in the middle of a run and reset with nothing running: device memory of the dense
 * caches and staging goes back; the rest still finishes. */
static void test_cancel_reset(void) {
    pl_model *g = make_model("tiny", 5, PL_BF16, PL_DEVICE_CUDA);
    if (!g) return;
    const pl_model_config *mc = pl_model_get_config(g);
    int32_t prompt[80];
    for (int i = 0; i < 80; i++) prompt[i] = (int32_t)((300 + 37 * i) % mc->vocab_size);
    for (int mode = 0; mode < 2; mode++) {
        pl_engine_config ec = {(pl_kv_mode)mode, 2, 16, 16, 0, 0, 0};
        pl_engine *e = NULL;
        CHECK_OK(pl_engine_create(g, &ec, &e, err, sizeof err), err);
        if (!e) continue;
        pl_request_params p = {0};
        p.prompt = prompt;
        p.max_new_tokens = 12;
        p.ignore_eos = 1;
        int64_t ids[3];
        for (int i = 0; i < 3; i++) {
            p.prompt_len = 30 + 20 * i;
            CHECK_OK(pl_engine_submit(e, &p, &ids[i], err, sizeof err), err);
        }
        for (int s = 0; s < 9; s++) CHECK_OK(pl_engine_step(e, err, sizeof err), err);
        CHECK_OK(pl_engine_cancel(e, ids[0], err, sizeof err), err);
        CHECK_OK(pl_engine_run(e, err, sizeof err), err);
        pl_request_result r;
        int n = 0, cancelled = 0;
        while (pl_engine_poll(e, &r)) {
            n++;
            cancelled += r.finish == PL_FINISH_CANCELLED;
            if (r.finish != PL_FINISH_CANCELLED)
                CHECK_MSG(r.finish == PL_FINISH_LENGTH && r.num_tokens == 12, "%s request %lld: finish %d, %d tokens",
                          mode_name(mode), (long long)r.request_id, (int)r.finish, r.num_tokens);
            pl_request_result_free(&r);
        }
        CHECK(n == 3 && cancelled == 1);
        CHECK_OK(pl_engine_reset_metrics(e, err, sizeof err), err);
        CHECK(pl_engine_dense_bytes(e) == 0);
        pl_engine_destroy(e);
    }
    pl_model_free(g);
}

/* Timing only: batch 4 of ~1000-token contexts on a qwen3-0.6b-shape model. */
static void timing_big(void) {
    pl_model *g = make_model("qwen3-0.6b", 1, PL_BF16, PL_DEVICE_CUDA);
    if (!g) return;
    const pl_model_config *mc = pl_model_get_config(g);
    pl_trace_config tc = {8, 800, 1024, 32, 64, mc->vocab_size, mc->eos_ids[0], 0};
    pl_trace t;
    CHECK_OK(pl_trace_generate(&tc, &t, err, sizeof err), err);
    run_out r[3];
    for (int mode = 0; mode < 3; mode++) {
        pl_engine_config ec = {(pl_kv_mode)mode, 4, 128, 128, 0, 0, 0};
        double t0 = pl_now_seconds();
        CHECK_OK(run_trace(g, &ec, &t, &r[mode], err, sizeof err), err);
        const pl_engine_metrics *m = &r[mode].m;
        printf("  qwen3-0.6b bf16 %-13s %.2f s: prefill %.0f tok/s, decode %.1f tok/s\n", mode_name(mode),
               pl_now_seconds() - t0, m->prefill_seconds > 0 ? (double)m->prompt_tokens / m->prefill_seconds : 0.0,
               m->decode_seconds > 0 ? (double)m->decode_tokens / m->decode_seconds : 0.0);
        check_complete(mode_name(mode), &r[mode], &t);
    }
    for (int mode = 0; mode < 2; mode++) {
        int same = 0, first = 0;
        double a = agreement(&r[mode], &r[2], &same, &first);
        printf("  qwen3-0.6b %s vs paged: %.1f%% agree, first token of %d, all of %d of %d requests\n", mode_name(mode),
               100.0 * a, first, same, t.num_requests);
    }
    for (int mode = 0; mode < 3; mode++) run_out_free(&r[mode]);
    pl_trace_free(&t);
    pl_model_free(g);
}

int main(void) {
    if (pl_cuda_device_check(err, sizeof err) != PL_OK) {
        printf("SKIP: %s\n", err);
        return 77;
    }
    test_modes(PL_F32, 0.95, 0);
    test_modes(PL_BF16, 0.5, 1); /* a flip of a bf16 near-tie ends the comparison of its request */
    test_budget_preemption();
    test_cancel_reset();
    const char *big = getenv("PL_CUDA_TEST_BIG");
    if (big && atoi(big) > 0) timing_big();
    TEST_END();
}
#endif
