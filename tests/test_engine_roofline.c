/* The engine's per-decode-step context counts (pl_engine_metrics.step_context_tokens), the
 * input of bench-serving's decode roofline: one entry per step sample, each the tokens the
 * step's attention read (every row's context including its new token). Checked against the
 * closed form of a trace without preemption: a request with prompt P and N new tokens
 * decodes N - 1 times, at contexts P + 1 .. P + N - 1, in every KV mode. Beside them each
 * step's rows (step_rows, which pick bench-serving's full-batch steps): 1..batch, summing to
 * the decode tokens; and each slot's context (step_slot_contexts): over all steps, exactly the
 * contexts P + 1 .. P + N - 1 of every request, adding up to each step's count; and whether a
 * prefill chunk ran just before each step (step_after_prefill). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pagellm/engine.h"
#include "test_util.h"

static int64_t expected_total(const pl_trace *t) {
    int64_t s = 0;
    for (int i = 0; i < t->num_requests; i++) {
        const int64_t P = t->requests[i].prompt_len, N = t->requests[i].max_new_tokens;
        s += (N - 1) * P + (N - 1) * N / 2;
    }
    return s;
}

static int run_once(pl_engine *e, const pl_trace *t, char *err, size_t err_len) {
    for (int i = 0; i < t->num_requests; i++) {
        pl_request_params p = {0};
        p.prompt = t->requests[i].prompt;
        p.prompt_len = t->requests[i].prompt_len;
        p.max_new_tokens = t->requests[i].max_new_tokens;
        p.ignore_eos = 1;
        int rc = pl_engine_submit(e, &p, NULL, err, err_len);
        if (rc) return rc;
    }
    int rc = pl_engine_run(e, err, err_len);
    pl_request_result r;
    while (pl_engine_poll(e, &r)) pl_request_result_free(&r);
    return rc;
}

static void check_metrics(const pl_engine *e, const pl_trace *t, int batch, const char *what) {
    pl_engine_metrics m;
    pl_engine_get_metrics(e, &m);
    CHECK_MSG(m.num_step_samples == m.decode_calls, "%s: %d step samples for %lld decode calls", what,
              m.num_step_samples, (long long)m.decode_calls);
    CHECK_MSG(m.num_step_samples == 0 || m.step_context_tokens != NULL, "%s: no context array", what);
    if (m.num_step_samples > 0 && !m.step_context_tokens) return;
    int64_t total = 0, max_row = 0, rows = 0;
    int bad = 0, bad_rows = 0;
    for (int i = 0; i < t->num_requests; i++)
        if (t->requests[i].prompt_len + t->requests[i].max_new_tokens > max_row)
            max_row = t->requests[i].prompt_len + t->requests[i].max_new_tokens;
    for (int i = 0; i < m.num_step_samples; i++) {
        const int64_t c = m.step_context_tokens[i];
        total += c;
        if (c < 2 || c > (int64_t)batch * max_row) bad++; /* >= one row of prompt 1 + new token */
        if (m.step_rows[i] < 1 || m.step_rows[i] > batch || c < 2 * (int64_t)m.step_rows[i]) bad_rows++;
        rows += m.step_rows[i];
    }
    CHECK_MSG(bad_rows == 0, "%s: %d steps with an impossible row count", what, bad_rows);
    CHECK_MSG(rows == m.decode_tokens, "%s: step rows sum to %lld, decode tokens %lld", what, (long long)rows,
              (long long)m.decode_tokens);
    CHECK_MSG(bad == 0, "%s: %d steps with an impossible context count", what, bad);
    CHECK_MSG(total == expected_total(t), "%s: contexts sum to %lld, expected %lld", what, (long long)total,
              (long long)expected_total(t));
    /* the slots' contexts: a histogram of the closed form's, taken down by every slot entry */
    CHECK_MSG(m.num_step_samples == 0 || m.step_slot_contexts != NULL, "%s: no slot context array", what);
    if (m.num_step_samples > 0 && !m.step_slot_contexts) return;
    int *hist = calloc((size_t)max_row + 1, sizeof(int));
    if (!hist) return;
    for (int i = 0; i < t->num_requests; i++)
        for (int j = 1; j < t->requests[i].max_new_tokens; j++) hist[t->requests[i].prompt_len + j]++;
    int off = 0, bad_sum = 0;
    for (int i = 0; i < m.num_step_samples; i++) {
        int64_t sum = 0;
        int occ = 0;
        for (int b = 0; b < batch; b++) {
            const int32_t c = m.step_slot_contexts[(size_t)i * batch + b];
            sum += c;
            occ += c > 0;
            if (c < 0 || c > max_row) off++;
            else if (c > 0 && hist[c]-- <= 0) off++;
        }
        if (sum != m.step_context_tokens[i] || occ != m.step_rows[i]) bad_sum++;
    }
    for (int64_t c = 0; c <= max_row; c++) off += hist[c] != 0;
    free(hist);
    CHECK_MSG(off == 0, "%s: %d slot contexts differ from the requests' P + 1 .. P + N - 1", what, off);
    CHECK_MSG(bad_sum == 0, "%s: %d steps whose slot contexts do not add up to their count and rows", what, bad_sum);
    /* after_prefill: 0 or 1, at most one step per prefill chunk; the first decode step comes in
     * the iteration whose chunk ended the first prompt, and a trace with more requests than
     * slots also decodes in iterations without a chunk */
    CHECK_MSG(m.num_step_samples == 0 || m.step_after_prefill != NULL, "%s: no after_prefill array", what);
    if (m.num_step_samples == 0 || !m.step_after_prefill) return;
    int after = 0, odd = 0;
    for (int i = 0; i < m.num_step_samples; i++) {
        after += m.step_after_prefill[i] == 1;
        odd += m.step_after_prefill[i] != 0 && m.step_after_prefill[i] != 1;
    }
    CHECK_MSG(odd == 0, "%s: %d after_prefill values other than 0 and 1", what, odd);
    CHECK_MSG(after <= m.prefill_chunks, "%s: %d steps after a prefill chunk, %lld chunks", what, after,
              (long long)m.prefill_chunks);
    CHECK_MSG(m.step_after_prefill[0] == 1, "%s: the first decode step does not follow a prefill chunk", what);
    CHECK_MSG(after < m.num_step_samples, "%s: every one of %d steps follows a prefill chunk", what, m.num_step_samples);
}

int main(void) {
    char err[512];
    pl_model_options mo = {0};
    mo.act_dtype = PL_F32;
    pl_model *model = NULL;
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 5, &mo, &model, err, sizeof err), err);
    if (!model) TEST_END();
    const pl_model_config *mc = pl_model_get_config(model);
    pl_trace t;
    pl_trace_config tc = {7, 20, 90, 2, 12, mc->vocab_size, mc->eos_ids[0], 3};
    CHECK_OK(pl_trace_generate(&tc, &t, err, sizeof err), err);
    const pl_kv_mode modes[3] = {PL_KV_DENSE, PL_KV_PAGED_GATHER, PL_KV_PAGED};
    for (int k = 0; k < 3; k++) {
        pl_engine_config ec = {modes[k], 3, 16, 16, 0, 0, 0};
        pl_engine *e = NULL;
        CHECK_OK(pl_engine_create(model, &ec, &e, err, sizeof err), err);
        if (!e) continue;
        char what[64];
        /* two runs: the arrays grow across them; a metrics reset empties them */
        CHECK_OK(run_once(e, &t, err, sizeof err), err);
        snprintf(what, sizeof what, "%s, first run", pl_kv_mode_name(modes[k]));
        check_metrics(e, &t, ec.batch_size, what);
        CHECK_OK(pl_engine_reset_metrics(e, err, sizeof err), err);
        pl_engine_metrics m;
        pl_engine_get_metrics(e, &m);
        CHECK_MSG(m.num_step_samples == 0, "after reset: %d step samples", m.num_step_samples);
        for (int rep = 0; rep < 24; rep++) /* > 256 steps: the arrays regrow together */
            CHECK_OK(run_once(e, &t, err, sizeof err), err);
        pl_engine_get_metrics(e, &m);
        CHECK_MSG(m.num_step_samples > 256, "%s: only %d steps in 24 runs", pl_kv_mode_name(modes[k]),
                  m.num_step_samples);
        int64_t total = 0, rows = 0, slots = 0;
        for (int i = 0; i < m.num_step_samples; i++) total += m.step_context_tokens[i], rows += m.step_rows[i];
        for (size_t i = 0; i < (size_t)m.num_step_samples * ec.batch_size; i++) slots += m.step_slot_contexts[i];
        CHECK_MSG(slots == total, "%s, 24 runs: slot contexts sum to %lld, the steps' counts to %lld", pl_kv_mode_name(modes[k]),
                  (long long)slots, (long long)total);
        CHECK_MSG(rows == m.decode_tokens, "%s, 24 runs: step rows sum to %lld, decode tokens %lld", pl_kv_mode_name(modes[k]),
                  (long long)rows, (long long)m.decode_tokens);
        CHECK_MSG(total == 24 * expected_total(&t), "%s, 24 runs: contexts sum to %lld, expected %lld",
                  pl_kv_mode_name(modes[k]), (long long)total, (long long)(24 * expected_total(&t)));
        pl_engine_destroy(e);
    }
    pl_trace_free(&t);
    pl_model_free(model);
    TEST_END();
}
