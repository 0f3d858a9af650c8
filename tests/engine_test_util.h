/* Shared helpers of the engine tests: a small synthetic model, a seed-style trace and a
 * runner that returns every request's tokens. */
#ifndef PL_ENGINE_TEST_UTIL_H
#define PL_ENGINE_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pagellm/engine.h"

typedef struct run_out {
    int n;
    int32_t **tokens;     /* by request id */
    int *num_tokens;
    pl_finish_reason *finish;
    int finished;         /* results polled */
    int duplicates;       /* ids polled twice */
    pl_engine_metrics m;  /* samples not kept */
    int64_t live_pages_after;
    size_t dense_bytes_after;
} run_out;

static inline void run_out_free(run_out *o) {
    for (int i = 0; i < o->n; i++) free(o->tokens[i]);
    free(o->tokens);
    free(o->num_tokens);
    free(o->finish);
    memset(o, 0, sizeof *o);
}

static inline void poll_all(pl_engine *e, run_out *o) {
    pl_request_result r;
    while (pl_engine_poll(e, &r)) {
        if (r.request_id >= 0 && r.request_id < o->n) {
            if (o->finish[r.request_id] != PL_FINISH_NONE) o->duplicates++;
            o->finish[r.request_id] = r.finish;
            free(o->tokens[r.request_id]);
            o->tokens[r.request_id] = r.tokens;
            o->num_tokens[r.request_id] = r.num_tokens;
            r.tokens = NULL;
            o->finished++;
        }
        pl_request_result_free(&r);
    }
}

/* Runs the whole trace (benchmark mode: greedy, EOS ignored) through a fresh engine. */
static inline int run_trace(pl_model *model, const pl_engine_config *cfg, const pl_trace *t, run_out *o, char *err,
                            size_t err_len) {
    memset(o, 0, sizeof *o);
    o->n = t->num_requests;
    o->tokens = calloc((size_t)o->n, sizeof(int32_t *));
    o->num_tokens = calloc((size_t)o->n, sizeof(int));
    o->finish = calloc((size_t)o->n, sizeof(pl_finish_reason));
    pl_engine *e = NULL;
    int rc = pl_engine_create(model, cfg, &e, err, err_len);
    if (rc) return rc;
    for (int i = 0; i < t->num_requests && rc == 0; i++) {
        pl_request_params p = {0};
        p.prompt = t->requests[i].prompt;
        p.prompt_len = t->requests[i].prompt_len;
        p.max_new_tokens = t->requests[i].max_new_tokens;
        p.ignore_eos = 1;
        rc = pl_engine_submit(e, &p, NULL, err, err_len);
    }
    if (rc == 0) rc = pl_engine_run(e, err, err_len);
    poll_all(e, o);
    pl_engine_get_metrics(e, &o->m);
    o->m.step_samples = o->m.gap_samples = NULL;
    const pl_kv_pools *pools = pl_engine_pools(e);
    if (pools) {
        pl_page_pool_stats st;
        pl_kv_pools_get_stats(pools, &st);
        o->live_pages_after = st.live_pages;
    }
    o->dense_bytes_after = pl_engine_dense_bytes(e);
    pl_engine_destroy(e);
    return rc;
}

/* The capped-budget preemption scenario shared by the CPU and GPU engine tests: its trace,
 * the longest request (prompt + output), and the K+V bytes of one token in one layer for
 * activations of elem bytes. */
static inline int budget_trace(const pl_model_config *mc, size_t elem, pl_trace *t, int *max_len, size_t *token_bytes,
                               char *err, size_t err_len) {
    pl_trace_config tc = {5, 24, 72, 6, 20, mc->vocab_size, mc->eos_ids[0], 3};
    int rc = pl_trace_generate(&tc, t, err, err_len);
    if (rc) return rc;
    *max_len = 0;
    for (int i = 0; i < t->num_requests; i++)
        if (t->requests[i].prompt_len + t->requests[i].max_new_tokens > *max_len)
            *max_len = t->requests[i].prompt_len + t->requests[i].max_new_tokens;
    *token_bytes = 2 * (size_t)mc->num_kv_heads * mc->head_dim * elem;
    return PL_OK;
}

#endif
