/* Scheduler behaviour: a tight KV budget forces preemptions yet every request finishes with
 * the tokens of an uncapped run (paged and dense budgets); randomized submit / cancel / step
 * sequences never lose, duplicate or leak a request or a page; EOS / stop / max_seq_len /
 * cancel finish reasons; argument errors. */
#include "base/rng.h"
#include "engine_test_util.h"
#include "test_util.h"

static int same_tokens(const run_out *a, const run_out *b, int i) {
    return a->num_tokens[i] == b->num_tokens[i] && a->tokens[i] && b->tokens[i] &&
           !memcmp(a->tokens[i], b->tokens[i], sizeof(int32_t) * (size_t)a->num_tokens[i]);
}

static void test_budget_preemption(pl_model *model) {
    char err[512];
    const pl_model_config *mc = pl_model_get_config(model);
    pl_trace t;
    int max_len = 0;
    size_t token_bytes = 0;
    CHECK_OK(budget_trace(mc, 4, &t, &max_len, &token_bytes, err, sizeof err), err);
    const int ps = 16;
    size_t page_all_layers = token_bytes * ps * (size_t)mc->num_layers;
    int need_pages = (max_len + ps - 1) / ps + 1;

    run_out ref;
    pl_engine_config ec = {PL_KV_PAGED, 4, 32, ps, 0, 0, 0};
    CHECK_OK(run_trace(model, &ec, &t, &ref, err, sizeof err), err);

    for (int mode = 0; mode < 3; mode++) {
        run_out o;
        pl_engine_config cc = {(pl_kv_mode)mode, 4, 32, ps, 0, 0, 0};
        /* room for the longest request plus a little: 4 slots cannot all fit. Dense also holds
         * the padded decode batch (all 4 slots x the longest context) */
        cc.kv_budget_bytes = mode == PL_KV_DENSE ? (size_t)(6 * max_len) * token_bytes * (size_t)mc->num_layers
                                                 : (size_t)need_pages * page_all_layers;
        CHECK_OK(run_trace(model, &cc, &t, &o, err, sizeof err), err);
        CHECK_MSG(o.m.preemptions > 0, "mode %d: no preemption under a tight budget", mode);
        CHECK(o.finished == t.num_requests && o.duplicates == 0);
        for (int i = 0; i < t.num_requests; i++) {
            CHECK_MSG(o.finish[i] == PL_FINISH_LENGTH, "mode %d request %d finish %d", mode, i, (int)o.finish[i]);
            CHECK_MSG(same_tokens(&o, &ref, i), "mode %d request %d: tokens differ from the uncapped run", mode, i);
        }
        CHECK(o.live_pages_after == 0);
        if (mode != PL_KV_DENSE) {
            CHECK(o.m.peak_live_pages <= (int64_t)need_pages * mc->num_layers);
            CHECK(o.m.storage_growths == 0);
        } else {
            CHECK(o.m.peak_dense_bytes <= cc.kv_budget_bytes);
        }
        run_out_free(&o);
    }
    /* a budget below one request: that request ends with an error, the others still run */
    {
        run_out o;
        pl_engine_config cc = {PL_KV_PAGED, 2, 32, ps, 0, 0, 0};
        cc.kv_budget_bytes = 2 * page_all_layers; /* 32 tokens */
        CHECK_OK(run_trace(model, &cc, &t, &o, err, sizeof err), err);
        CHECK(o.finished == t.num_requests);
        int errors = 0;
        for (int i = 0; i < t.num_requests; i++) errors += o.finish[i] == PL_FINISH_ERROR;
        CHECK(errors > 0);
        CHECK(o.live_pages_after == 0);
        run_out_free(&o);
    }
    run_out_free(&ref);
    pl_trace_free(&t);
}

typedef struct cb_count {
    int tokens[256];
    int finishes[256];
} cb_count;

static void count_cb(void *ctx, int64_t id, int32_t tok, pl_finish_reason why) {
    cb_count *c = ctx;
    if (id < 0 || id >= 256) return;
    if (why == PL_FINISH_NONE && tok >= 0) c->tokens[id]++;
    else c->finishes[id]++;
}

static void test_random_sequences(pl_model *model) {
    char err[512];
    const pl_model_config *mc = pl_model_get_config(model);
    pl_mt19937 rng;
    pl_mt_seed(&rng, 42);
    int32_t prompt[200];
    /* the sanitizer build runs a shorter sequence per round (same coverage of modes) */
    const int sanitized = getenv("PAGELLM_SANITIZED") != NULL;
    const int num_ops = sanitized ? 36 : 70, max_submit = sanitized ? 12 : 24;
    int64_t capped_preemptions = 0;
    for (int round = 0; round < 6; round++) {
        pl_kv_mode mode = (pl_kv_mode)(round % 3);
        int capped = round >= 3;
        pl_engine_config ec = {mode, 1 + round % 3, 8 + 8 * (round % 4), 8, 0, 0, 0};
        /* 12 pages of 8 tokens: one request (<= 48 tokens) always fits, four at once do not */
        if (capped) ec.kv_budget_bytes = (size_t)12 * 8 * 2 * mc->num_kv_heads * mc->head_dim * 4 * mc->num_layers;
        pl_engine *e = NULL;
        CHECK_OK(pl_engine_create(model, &ec, &e, err, sizeof err), err);
        if (!e) continue;
        cb_count *cb = calloc(1, sizeof *cb);
        pl_engine_set_callback(e, count_cb, cb);
        run_out o = {0};
        o.n = 256;
        o.tokens = calloc(256, sizeof(int32_t *));
        o.num_tokens = calloc(256, sizeof(int));
        o.finish = calloc(256, sizeof(pl_finish_reason));
        int submitted = 0, cancelled_ok = 0;
        for (int op = 0; op < num_ops; op++) {
            int kind = (int)pl_mt_randint(&rng, 0, 9);
            if (kind < 3 && submitted < max_submit) {
                pl_request_params p = {0};
                p.prompt_len = (int)pl_mt_randint(&rng, 1, 40);
                for (int j = 0; j < p.prompt_len; j++) prompt[j] = (int32_t)pl_mt_randint(&rng, 0, mc->vocab_size - 1);
                p.prompt = prompt;
                p.max_new_tokens = (int)pl_mt_randint(&rng, 1, 8);
                p.ignore_eos = (int)pl_mt_randint(&rng, 0, 1);
                if (pl_mt_randint(&rng, 0, 2) == 0) {
                    p.sampling.temperature = 0.8f;
                    p.sampling.top_k = 20;
                    p.sampling.top_p = 0.9f;
                    p.sampling.seed = (uint64_t)op;
                }
                int64_t id = -1;
                CHECK_OK(pl_engine_submit(e, &p, &id, err, sizeof err), err);
                CHECK(id == submitted);
                submitted++;
            } else if (kind == 3 && submitted > 0) {
                int64_t id = pl_mt_randint(&rng, 0, submitted - 1);
                poll_all(e, &o);
                int was_open = o.finish[id] == PL_FINISH_NONE;
                int rc = pl_engine_cancel(e, id, err, sizeof err);
                CHECK_MSG((rc == PL_OK) == was_open, "cancel %lld: rc %d, open %d", (long long)id, rc, was_open);
                cancelled_ok += rc == PL_OK;
            } else {
                CHECK_OK(pl_engine_step(e, err, sizeof err), err);
            }
            poll_all(e, &o);
        }
        CHECK_OK(pl_engine_run(e, err, sizeof err), err);
        poll_all(e, &o);
        CHECK_MSG(o.finished == submitted && o.duplicates == 0, "round %d: %d of %d finished, %d duplicates", round,
                  o.finished, submitted, o.duplicates);
        int cancelled = 0;
        for (int i = 0; i < submitted; i++) {
            CHECK(o.finish[i] != PL_FINISH_NONE && o.finish[i] != PL_FINISH_ERROR);
            cancelled += o.finish[i] == PL_FINISH_CANCELLED;
            CHECK_MSG(cb->tokens[i] == o.num_tokens[i] && cb->finishes[i] == 1, "round %d request %d: cb %d/%d vs %d",
                      round, i, cb->tokens[i], cb->finishes[i], o.num_tokens[i]);
        }
        CHECK(cancelled == cancelled_ok);
        pl_engine_metrics em;
        pl_engine_get_metrics(e, &em);
        if (capped) capped_preemptions += em.preemptions;
        int q, run, fin;
        pl_engine_counts(e, &q, &run, &fin);
        CHECK(q == 0 && run == 0 && fin == 0 && !pl_engine_busy(e));
        const pl_kv_pools *pools = pl_engine_pools(e);
        if (pools) {
            pl_page_pool_stats st;
            pl_kv_pools_get_stats(pools, &st);
            CHECK_MSG(st.live_pages == 0, "round %d: %d live pages", round, st.live_pages);
        }
        CHECK_OK(pl_engine_reset_metrics(e, err, sizeof err), err);
        CHECK(pl_engine_dense_bytes(e) == 0);
        run_out_free(&o);
        free(cb);
        pl_engine_destroy(e);
    }
    CHECK_MSG(capped_preemptions > 0, "the capped rounds never preempted");
}

static void test_finish_reasons(pl_model *model) {
    char err[512];
    const pl_model_config *mc = pl_model_get_config(model);
    int32_t prompt[24];
    for (int i = 0; i < 24; i++) prompt[i] = (int32_t)(300 + 17 * i);
    pl_engine_config ec = {PL_KV_PAGED, 2, 8, 8, 0, 30, 0};
    pl_engine *e = NULL;
    CHECK_OK(pl_engine_create(model, &ec, &e, err, sizeof err), err);
    if (!e) return;
    pl_request_params p = {0};
    p.prompt = prompt;
    p.prompt_len = 20;
    p.max_new_tokens = 8;
    p.ignore_eos = 1;
    int64_t id;
    CHECK_OK(pl_engine_submit(e, &p, &id, err, sizeof err), err);
    CHECK_OK(pl_engine_run(e, err, sizeof err), err);
    pl_request_result base;
    CHECK(pl_engine_poll(e, &base) == 1);
    CHECK(base.finish == PL_FINISH_LENGTH && base.num_tokens == 8);
    /* stop on the 4th token (if it did not appear before): 3 tokens, reason stop */
    int first = 0;
    for (int j = 0; j < 3; j++) first |= base.tokens[j] == base.tokens[3];
    if (!first) {
        p.stop_tokens = &base.tokens[3];
        p.num_stop_tokens = 1;
        CHECK_OK(pl_engine_submit(e, &p, &id, err, sizeof err), err);
        CHECK_OK(pl_engine_run(e, err, sizeof err), err);
        pl_request_result r;
        CHECK(pl_engine_poll(e, &r) == 1);
        CHECK(r.finish == PL_FINISH_STOP && r.num_tokens == 3 && !memcmp(r.tokens, base.tokens, 3 * sizeof(int32_t)));
        pl_request_result_free(&r);
        p.stop_tokens = NULL;
        p.num_stop_tokens = 0;
    }
    /* max_seq_len 30: prompt 20 -> 10 tokens at most; prompt 30 -> none; 31 rejected */
    p.max_new_tokens = 50;
    CHECK_OK(pl_engine_submit(e, &p, &id, err, sizeof err), err);
    p.prompt_len = 24;
    CHECK_ERR(pl_engine_submit(e, &(pl_request_params){prompt, 0, 5, {0, 0, 0, 0}, NULL, 0, 1, NULL}, &id, err, sizeof err),
              PL_ERR_INVALID, "prompt_len", err);
    CHECK_ERR(pl_engine_submit(e, &(pl_request_params){prompt, 4, 0, {0, 0, 0, 0}, NULL, 0, 1, NULL}, &id, err, sizeof err),
              PL_ERR_INVALID, "max_new_tokens", err);
    int32_t bad = mc->vocab_size;
    CHECK_ERR(pl_engine_submit(e, &(pl_request_params){&bad, 1, 3, {0, 0, 0, 0}, NULL, 0, 1, NULL}, &id, err, sizeof err),
              PL_ERR_INVALID, "prompt[0]", err);
    CHECK_OK(pl_engine_run(e, err, sizeof err), err);
    pl_request_result r;
    CHECK(pl_engine_poll(e, &r) == 1);
    CHECK_MSG(r.finish == PL_FINISH_LENGTH && r.num_tokens == 10, "finish %d, %d tokens", (int)r.finish, r.num_tokens);
    CHECK(!memcmp(r.tokens, base.tokens, 8 * sizeof(int32_t)));
    pl_request_result_free(&r);
    CHECK(pl_engine_cancel(e, 12345, err, sizeof err) == PL_ERR_INVALID);
    pl_request_result_free(&base);
    pl_engine_destroy(e);

    pl_engine_config badc = {PL_KV_PAGED, 0, 8, 8, 0, 0, 0};
    CHECK_ERR(pl_engine_create(model, &badc, &e, err, sizeof err), PL_ERR_INVALID, "batch_size", err);
    badc.batch_size = 2;
    badc.prefill_step = 0;
    CHECK_ERR(pl_engine_create(model, &badc, &e, err, sizeof err), PL_ERR_INVALID, "prefill_step", err);
    badc.prefill_step = 8;
    badc.kv_budget_bytes = 100;
    CHECK_ERR(pl_engine_create(model, &badc, &e, err, sizeof err), PL_ERR_INVALID, "kv_budget_bytes", err);
}

int main(void) {
    char err[512];
    pl_model_options mo = {0};
    mo.act_dtype = PL_F32;
    pl_model *model = NULL;
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 11, &mo, &model, err, sizeof err), err);
    if (!model) TEST_END();
    test_budget_preemption(model);
    test_random_sequences(model);
    test_finish_reasons(model);
    pl_model_free(model);
    TEST_END();
}
