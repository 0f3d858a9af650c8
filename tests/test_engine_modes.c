/* In f32 the three KV modes (dense, paged-gather, paged) emit identical greedy tokens for
 * every request of a seed-style trace, with the expected metric totals and no leaked page.
 * Dense always runs the readable FP32 attention (right-aligned padded batch + mask);
 * paged-gather runs the fused operator while the context is <= 256 and the readable
 * attention beyond; paged runs pl_paged_attention. Different summation orders, same tokens. */
#include "engine_test_util.h"
#include "test_util.h"

int main(void) {
    char err[512];
    pl_model_options mo = {0};
    mo.act_dtype = PL_F32;
    pl_model *model = NULL;
    CHECK_OK(pl_model_create_synthetic("tiny-untied", 7, &mo, &model, err, sizeof err), err);
    if (!model) TEST_END();
    const pl_model_config *mc = pl_model_get_config(model);
    /* seed-style: the seed's flags scaled down (multi-chunk prompts, multi-page caches) */
    pl_trace_config tc = {8, 64, 400, 8, 40, mc->vocab_size, mc->eos_ids[0], 0};
    if (getenv("PAGELLM_SANITIZED")) { /* the sanitizer build runs a shorter trace */
        tc.num_seqs = 6;
        tc.max_input_len = 300;
        tc.max_output_len = 16;
    }
    pl_trace t;
    CHECK_OK(pl_trace_generate(&tc, &t, err, sizeof err), err);
    int64_t prompt = pl_trace_prompt_tokens(&t), out = pl_trace_output_tokens(&t);
    /* contexts on both sides of gather's 256-token switch between fused and readable */
    int min_ctx = 1 << 30, max_ctx = 0;
    for (int i = 0; i < t.num_requests; i++) {
        int c = t.requests[i].prompt_len;
        if (c < min_ctx) min_ctx = c;
        if (c + t.requests[i].max_new_tokens > max_ctx) max_ctx = c + t.requests[i].max_new_tokens;
    }
    CHECK_MSG(min_ctx <= 256 && max_ctx > 256, "trace contexts %d..%d", min_ctx, max_ctx);

    run_out r[3];
    for (int mode = 0; mode < 3; mode++) {
        pl_engine_config ec = {(pl_kv_mode)mode, 3, 64, 32, 0, 0, 0};
        CHECK_OK(run_trace(model, &ec, &t, &r[mode], err, sizeof err), err);
        run_out *o = &r[mode];
        CHECK_MSG(o->finished == t.num_requests && o->duplicates == 0, "mode %d: %d finished, %d duplicates", mode,
                  o->finished, o->duplicates);
        for (int i = 0; i < t.num_requests; i++) {
            CHECK_MSG(o->finish[i] == PL_FINISH_LENGTH, "mode %d request %d: finish %d", mode, i, (int)o->finish[i]);
            CHECK(o->num_tokens[i] == t.requests[i].max_new_tokens);
        }
        CHECK(o->m.prompt_tokens == prompt);
        CHECK(o->m.generated_tokens == out);
        CHECK(o->m.decode_tokens == out - t.num_requests);
        CHECK(o->m.finished_requests == t.num_requests);
        CHECK(o->m.preemptions == 0);
        CHECK(o->m.peak_active_requests == 4); /* 3 slots + the pending prefill */
        CHECK(o->m.decode_calls > 0 && o->m.prefill_chunks >= t.num_requests);
        CHECK(o->live_pages_after == 0);
        CHECK(o->m.peak_kv_bytes > 0);
    }
    /* copy accounting: dense concatenates and stages, gather stages, paged copies neither */
    CHECK(r[0].m.dense_growth_copy_bytes > 0 && r[0].m.dense_staging_copy_bytes > 0);
    CHECK(r[0].m.peak_live_pages == 0 && r[0].m.storage_growths == 0);
    CHECK(r[1].m.dense_growth_copy_bytes == 0 && r[1].m.dense_staging_copy_bytes == r[0].m.dense_staging_copy_bytes);
    CHECK(r[2].m.dense_growth_copy_bytes == 0 && r[2].m.dense_staging_copy_bytes == 0);
    CHECK(r[2].m.peak_live_pages > 0 && r[2].m.peak_live_pages == r[1].m.peak_live_pages);
    CHECK(r[2].m.storage_growths == r[1].m.storage_growths && r[2].m.storage_growths > 0);
    CHECK(r[2].m.tail_waste_slots > 0 && r[2].m.tail_waste_slots < r[2].m.tail_live_slots);
    CHECK(r[2].m.reused_page_allocations > 0);
    CHECK(r[2].m.decode_calls == r[0].m.decode_calls && r[1].m.decode_calls == r[0].m.decode_calls);

    for (int mode = 1; mode < 3; mode++)
        for (int i = 0; i < t.num_requests; i++) {
            int same = r[mode].num_tokens[i] == r[0].num_tokens[i] && r[0].tokens[i] && r[mode].tokens[i] &&
                       !memcmp(r[mode].tokens[i], r[0].tokens[i], sizeof(int32_t) * (size_t)r[0].num_tokens[i]);
            CHECK_MSG(same, "mode %s request %d differs from dense", pl_kv_mode_name((pl_kv_mode)mode), i);
        }
    /* the tokens are not trivially constant */
    int distinct = 0;
    for (int j = 1; j < r[2].num_tokens[0]; j++) distinct += r[2].tokens[0][j] != r[2].tokens[0][0];
    CHECK(distinct > 0);
    for (int mode = 0; mode < 3; mode++) run_out_free(&r[mode]);
    pl_trace_free(&t);
    pl_model_free(model);
    TEST_END();
}
