/* The scheduler of spec 4.2: FIFO admission, at most one prefill chunk per iteration, then
 * one decode token for every occupied slot; pages released when a request finishes; a
 * capped KV budget handled by preempting the most recently admitted request (its cache is
 * dropped and it goes back to the queue head to recompute prompt + generated tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timing.h"
#include "cuda/backend_cuda.h"
#include "engine/engine_internal.h"

const char *pl_kv_mode_name(pl_kv_mode m) {
    switch (m) {
    case PL_KV_DENSE: return "dense";
    case PL_KV_PAGED_GATHER: return "paged-gather";
    case PL_KV_PAGED: return "paged";
    }
    return "?";
}

int pl_kv_mode_parse(const char *name, pl_kv_mode *out) {
    for (int m = 0; m <= PL_KV_PAGED; m++)
        if (name && !strcmp(name, pl_kv_mode_name((pl_kv_mode)m))) {
            *out = (pl_kv_mode)m;
            return PL_OK;
        }
    return PL_ERR_INVALID;
}

const char *pl_finish_reason_name(pl_finish_reason r) {
    switch (r) {
    case PL_FINISH_NONE: return "none";
    case PL_FINISH_EOS: return "eos";
    case PL_FINISH_LENGTH: return "length";
    case PL_FINISH_STOP: return "stop";
    case PL_FINISH_CANCELLED: return "cancelled";
    case PL_FINISH_ERROR: return "error";
    }
    return "?";
}

void pl_request_result_free(pl_request_result *r) {
    if (!r) return;
    free(r->tokens);
    r->tokens = NULL;
    r->num_tokens = 0;
}

/* ---- creation ------------------------------------------------------------------------- */

int pl_engine_create(pl_model *model, const pl_engine_config *cfg, pl_engine **out, char *err, size_t err_len) {
    if (!model || !cfg || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "engine: model, cfg and out must not be NULL");
    *out = NULL;
    if (cfg->batch_size <= 0 || cfg->batch_size > 4096)
        return pl_fail(err, err_len, PL_ERR_INVALID, "batch_size: must be in [1, 4096], got %d", cfg->batch_size);
    if (cfg->prefill_step <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "prefill_step: must be positive, got %d", cfg->prefill_step);
    if (cfg->page_size <= 0 || cfg->page_size > 65536)
        return pl_fail(err, err_len, PL_ERR_INVALID, "page_size: must be in [1, 65536], got %d", cfg->page_size);
    if (cfg->max_seq_len < 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "max_seq_len: must be >= 0, got %d", cfg->max_seq_len);
    if ((int)cfg->kv_mode < 0 || cfg->kv_mode > PL_KV_PAGED)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv_mode: unknown value %d", (int)cfg->kv_mode);
    pl_engine *e = calloc(1, sizeof *e);
    if (!e) return pl_fail(err, err_len, PL_ERR_NOMEM, "engine: out of memory");
    e->model = model;
    e->mc = *pl_model_get_config(model);
    e->cfg = *cfg;
    e->dtype = pl_model_get_options(model)->act_dtype;
    e->elem = e->dtype == PL_F32 ? 4 : 2;
    e->token_bytes = 2 * (size_t)e->mc.num_kv_heads * (size_t)e->mc.head_dim * e->elem;
    e->next_id = 0;
    int rc = PL_OK;
    if (cfg->kv_mode != PL_KV_DENSE) {
        pl_pool_mode mode = PL_POOL_GROWABLE;
        if (cfg->kv_budget_bytes) {
            size_t per_page = e->token_bytes * (size_t)cfg->page_size * (size_t)e->mc.num_layers;
            size_t pages = cfg->kv_budget_bytes / per_page;
            if (pages < 1) {
                free(e);
                return pl_fail(err, err_len, PL_ERR_INVALID,
                               "kv_budget_bytes: %zu is less than one page across all layers (%zu bytes)",
                               cfg->kv_budget_bytes, per_page);
            }
            if (pages > 0x7fffffff) pages = 0x7fffffff;
            e->capped_pages = (int)pages;
            mode = PL_POOL_CAPPED;
        } else if (pl_model_get_options(model)->device == PL_DEVICE_CUDA) {
            if (cfg->kv_budget_fraction < 0 || cfg->kv_budget_fraction > 1) {
                free(e);
                return pl_fail(err, err_len, PL_ERR_INVALID, "kv_budget_fraction: %g must be in [0, 1]",
                               cfg->kv_budget_fraction);
            }
            size_t per_page = e->token_bytes * (size_t)cfg->page_size * (size_t)e->mc.num_layers;
            double frac = cfg->kv_budget_fraction > 0 ? cfg->kv_budget_fraction : 0.85;
            if ((rc = pl_cuda_kv_budget_pages(per_page, 0, frac, 2048, &e->capped_pages, err, err_len)) != PL_OK) {
                free(e);
                return rc;
            }
            mode = PL_POOL_CAPPED;
        }
        rc = pl_model_create_pools(model, cfg->page_size, mode, e->capped_pages, &e->pools, err, err_len);
        if (rc != PL_OK) {
            free(e);
            return rc;
        }
        e->has_pools = 1;
    }
    int B = cfg->batch_size;
    e->slots = calloc((size_t)B, sizeof(pl_req *));
    e->chunk_lens = calloc((size_t)B, sizeof(int));
    e->positions = calloc((size_t)B, sizeof(int));
    e->seqs = calloc((size_t)B, sizeof(pl_kv_seq *));
    e->cur = calloc((size_t)B, sizeof(pl_req *));
    e->samplers = malloc(sizeof(pl_sampler *) * (size_t)B);
    e->toks = malloc(sizeof(int32_t) * (size_t)B);
    e->slot_ctx = malloc(sizeof(int32_t) * (size_t)B);
    e->tok_cap = B > cfg->prefill_step ? B : cfg->prefill_step;
    e->tok_buf = malloc(sizeof(int32_t) * (size_t)e->tok_cap);
    if (!e->slots || !e->chunk_lens || !e->positions || !e->seqs || !e->cur || !e->samplers || !e->toks || !e->slot_ctx || !e->tok_buf) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "engine: out of memory");
    } else {
        rc = pl_eng_modes_init(e, err, err_len);
    }
    if (rc != PL_OK) {
        pl_engine_destroy(e);
        return rc;
    }
    e->attend_ops.attend = pl_eng_attend;
    e->attend_ops.ctx = e;
    *out = e;
    return PL_OK;
}

static void req_free(pl_engine *e, pl_req *r) {
    if (!r) return;
    if (r->has_kv) pl_kv_seq_destroy(&r->kv);
    pl_eng_dense_free(e, r);
    free(r->dense);
    pl_sampler_free(r->sampler);
    free(r->tokens);
    free(r->stop);
    free(r);
}

void pl_engine_destroy(pl_engine *e) {
    if (!e) return;
    for (pl_req *r = e->q_head, *n; r; r = n) {
        n = r->next;
        req_free(e, r);
    }
    req_free(e, e->pending);
    if (e->slots)
        for (int s = 0; s < e->cfg.batch_size; s++) req_free(e, e->slots[s]);
    for (int i = 0; i < e->done_count; i++) pl_request_result_free(&e->done[(e->done_head + i) % e->done_cap]);
    free(e->done);
    if (e->has_pools) pl_kv_pools_destroy(&e->pools);
    pl_eng_modes_free(e);
    free(e->slots);
    free(e->chunk_lens);
    free(e->positions);
    free(e->seqs);
    free(e->cur);
    free(e->samplers);
    free(e->toks);
    free(e->slot_ctx);
    free(e->tok_buf);
    free(e->m.step_samples);
    free(e->m.step_context_tokens);
    free(e->m.step_rows);
    free(e->m.step_slot_contexts);
    free(e->m.step_after_prefill);
    free(e->m.gap_samples);
    free(e);
}

void pl_engine_set_callback(pl_engine *e, pl_token_callback cb, void *ctx) {
    e->cb = cb;
    e->cb_ctx = ctx;
}

void pl_engine_set_tokenizer(pl_engine *e, const pl_tokenizer *tok) {
    if (e) e->tok = tok;
}

static int submit_ids(pl_engine *e, const pl_request_params *p, int64_t *id, char *err, size_t err_len);

int pl_engine_submit(pl_engine *e, const pl_request_params *p, int64_t *id, char *err, size_t err_len) {
    if (!e || !p) return pl_fail(err, err_len, PL_ERR_INVALID, "submit: engine and params must not be NULL");
    if (p->prompt || !p->prompt_text) return submit_ids(e, p, id, err, err_len);
    if (!e->tok)
        return pl_fail(err, err_len, PL_ERR_INVALID, "prompt_text: the engine has no tokenizer (pl_engine_set_tokenizer)");
    pl_token_buf ids = {0};
    int rc = pl_tokenizer_encode(e->tok, p->prompt_text, strlen(p->prompt_text), PL_TOK_MATCH_SPECIAL, &ids, err, err_len);
    if (rc == PL_OK && ids.n > 0x7fffffff) rc = pl_fail(err, err_len, PL_ERR_INVALID, "prompt_text: %zu tokens is too long", ids.n);
    if (rc == PL_OK) {
        pl_request_params q = *p;
        q.prompt = ids.ids;
        q.prompt_len = (int)ids.n; /* an empty text gives 0 ids: refused below as prompt_len 0 */
        q.prompt_text = NULL;
        rc = submit_ids(e, &q, id, err, err_len);
    }
    pl_token_buf_free(&ids);
    return rc;
}

const pl_kv_pools *pl_engine_pools(const pl_engine *e) { return e->has_pools ? &e->pools : NULL; }

size_t pl_engine_dense_bytes(const pl_engine *e) {
    size_t s = pl_eng_stage_bytes(e);
    if (e->pending) s += pl_eng_dense_req_bytes(e, e->pending);
    for (int i = 0; i < e->cfg.batch_size; i++)
        if (e->slots[i]) s += pl_eng_dense_req_bytes(e, e->slots[i]);
    return s;
}

/* ---- queue ---------------------------------------------------------------------------- */

static void queue_unlink(pl_engine *e, pl_req *r) {
    if (r->prev) r->prev->next = r->next;
    else e->q_head = r->next;
    if (r->next) r->next->prev = r->prev;
    else e->q_tail = r->prev;
    r->prev = r->next = NULL;
    e->num_queued--;
}

static void queue_push_back(pl_engine *e, pl_req *r) {
    r->prev = e->q_tail;
    r->next = NULL;
    if (e->q_tail) e->q_tail->next = r;
    else e->q_head = r;
    e->q_tail = r;
    e->num_queued++;
    r->state = PL_REQ_QUEUED;
}

static void queue_push_front(pl_engine *e, pl_req *r) {
    r->prev = NULL;
    r->next = e->q_head;
    if (e->q_head) e->q_head->prev = r;
    else e->q_tail = r;
    e->q_head = r;
    e->num_queued++;
    r->state = PL_REQ_QUEUED;
}

static int submit_ids(pl_engine *e, const pl_request_params *p, int64_t *id, char *err, size_t err_len) {
    if (!p->prompt || p->prompt_len <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "prompt_len: must be positive with a prompt, got %d", p->prompt_len);
    if (p->max_new_tokens <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "max_new_tokens: must be positive, got %d", p->max_new_tokens);
    if (e->cfg.max_seq_len && p->prompt_len > e->cfg.max_seq_len)
        return pl_fail(err, err_len, PL_ERR_INVALID, "prompt_len: %d exceeds max_seq_len %d", p->prompt_len,
                       e->cfg.max_seq_len);
    if (p->num_stop_tokens < 0 || (p->num_stop_tokens > 0 && !p->stop_tokens))
        return pl_fail(err, err_len, PL_ERR_INVALID, "num_stop_tokens: %d without a stop_tokens array", p->num_stop_tokens);
    for (int i = 0; i < p->prompt_len; i++)
        if (p->prompt[i] < 0 || p->prompt[i] >= e->mc.vocab_size)
            return pl_fail(err, err_len, PL_ERR_INVALID, "prompt[%d]: token %d outside [0, %d)", i, (int)p->prompt[i],
                           e->mc.vocab_size);
    if ((int64_t)p->prompt_len + p->max_new_tokens > 0x7fffffff)
        return pl_fail(err, err_len, PL_ERR_INVALID, "max_new_tokens: %d too large", p->max_new_tokens);
    pl_req *r = calloc(1, sizeof *r);
    if (!r) return pl_fail(err, err_len, PL_ERR_NOMEM, "submit: out of memory");
    r->tokens = malloc(sizeof(int32_t) * ((size_t)p->prompt_len + (size_t)p->max_new_tokens));
    if (p->num_stop_tokens) r->stop = malloc(sizeof(int32_t) * (size_t)p->num_stop_tokens);
    if (e->cfg.kv_mode == PL_KV_DENSE) r->dense = calloc((size_t)e->mc.num_layers, sizeof(pl_dense_cache));
    int rc = PL_OK;
    if (!r->tokens || (p->num_stop_tokens && !r->stop) || (e->cfg.kv_mode == PL_KV_DENSE && !r->dense))
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "submit: out of memory");
    else if (p->sampling.temperature > 0)
        rc = pl_sampler_create(&p->sampling, e->mc.vocab_size, &r->sampler, err, err_len);
    if (rc != PL_OK) {
        req_free(e, r);
        return rc;
    }
    memcpy(r->tokens, p->prompt, sizeof(int32_t) * (size_t)p->prompt_len);
    if (p->num_stop_tokens) memcpy(r->stop, p->stop_tokens, sizeof(int32_t) * (size_t)p->num_stop_tokens);
    r->num_stop = p->num_stop_tokens;
    r->prompt_len = p->prompt_len;
    r->max_new_tokens = p->max_new_tokens;
    r->ignore_eos = p->ignore_eos;
    r->next_token = -1;
    r->slot = -1;
    r->id = e->next_id++;
    queue_push_back(e, r);
    if (id) *id = r->id;
    return PL_OK;
}

/* ---- request life cycle ---------------------------------------------------------------- */

/* Drops the request's KV (pages back to the pools, dense caches freed). */
static void drop_kv(pl_engine *e, pl_req *r) {
    if (r->has_kv) {
        pl_kv_seq_destroy(&r->kv); /* releases every page exactly once */
        r->has_kv = 0;
    }
    pl_eng_dense_free(e, r);
    r->offset = 0;
}

static void detach(pl_engine *e, pl_req *r) {
    if (r->state == PL_REQ_QUEUED) queue_unlink(e, r);
    else if (r->state == PL_REQ_PENDING) e->pending = NULL;
    else if (r->state == PL_REQ_SLOT) e->slots[r->slot] = NULL;
    r->slot = -1;
}

/* Ends a request: releases its memory and moves its result to the finished ring. */
static void finish(pl_engine *e, pl_req *r, pl_finish_reason why) {
    detach(e, r);
    drop_kv(e, r);
    r->state = PL_REQ_DONE;
    r->finish = why;
    e->m.finished_requests++;
    if (e->done_count == e->done_cap) {
        int cap = e->done_cap ? 2 * e->done_cap : 16;
        pl_request_result *d = malloc(sizeof *d * (size_t)cap);
        if (d) {
            for (int i = 0; i < e->done_count; i++) d[i] = e->done[(e->done_head + i) % e->done_cap];
            free(e->done);
            e->done = d;
            e->done_cap = cap;
            e->done_head = 0;
        }
    }
    if (e->done_count < e->done_cap) {
        pl_request_result *res = &e->done[(e->done_head + e->done_count++) % e->done_cap];
        memset(res, 0, sizeof *res);
        res->request_id = r->id;
        res->finish = why;
        res->num_tokens = r->num_generated;
        res->preemptions = r->preemptions;
        snprintf(res->error, sizeof res->error, "%s", r->error);
        res->tokens = malloc(sizeof(int32_t) * (size_t)(r->num_generated ? r->num_generated : 1));
        if (res->tokens) memcpy(res->tokens, r->tokens + r->prompt_len, sizeof(int32_t) * (size_t)r->num_generated);
        else res->num_tokens = 0;
    }
    if (e->cb) e->cb(e->cb_ctx, r->id, -1, why);
    req_free(e, r);
}

int pl_engine_poll(pl_engine *e, pl_request_result *out) {
    if (!e || !out || e->done_count == 0) return 0;
    *out = e->done[e->done_head];
    e->done_head = (e->done_head + 1) % e->done_cap;
    e->done_count--;
    return 1;
}

int pl_engine_busy(const pl_engine *e) {
    if (e->q_head || e->pending) return 1;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s]) return 1;
    return 0;
}

void pl_engine_counts(const pl_engine *e, int *queued, int *running, int *finished) {
    int run = e->pending ? 1 : 0;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s]) run++;
    if (queued) *queued = e->num_queued;
    if (running) *running = run;
    if (finished) *finished = e->done_count;
}

static pl_req *find(pl_engine *e, int64_t id) {
    for (pl_req *r = e->q_head; r; r = r->next)
        if (r->id == id) return r;
    if (e->pending && e->pending->id == id) return e->pending;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s] && e->slots[s]->id == id) return e->slots[s];
    return NULL;
}

int pl_engine_cancel(pl_engine *e, int64_t id, char *err, size_t err_len) {
    if (!e) return pl_fail(err, err_len, PL_ERR_INVALID, "cancel: engine must not be NULL");
    pl_req *r = find(e, id);
    if (!r) return pl_fail(err, err_len, PL_ERR_INVALID, "request_id: %lld is not queued or running", (long long)id);
    finish(e, r, PL_FINISH_CANCELLED);
    return PL_OK;
}

static int is_eos(const pl_engine *e, int32_t t) {
    for (int i = 0; i < e->mc.num_eos; i++)
        if (e->mc.eos_ids[i] == t) return 1;
    return 0;
}

/* Handles a sampled token of a request whose cache holds `offset` tokens. Returns the
 * finish reason (NONE: still running, token emitted and kept as next_token). */
static pl_finish_reason accept_token(pl_engine *e, pl_req *r, int32_t t) {
    if (!r->ignore_eos && is_eos(e, t)) return PL_FINISH_EOS;
    for (int i = 0; i < r->num_stop; i++)
        if (r->stop[i] == t) return PL_FINISH_STOP;
    r->tokens[r->prompt_len + r->num_generated++] = t;
    r->next_token = t;
    e->m.generated_tokens++;
    if (e->cb) e->cb(e->cb_ctx, r->id, t, PL_FINISH_NONE);
    if (r->num_generated >= r->max_new_tokens) return PL_FINISH_LENGTH;
    if (e->cfg.max_seq_len && r->offset + 1 >= e->cfg.max_seq_len) return PL_FINISH_LENGTH;
    return PL_FINISH_NONE;
}

/* ---- memory: reservation and preemption ------------------------------------------------ */

static pl_req *newest_live(pl_engine *e) {
    pl_req *best = e->pending;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s] && (!best || e->slots[s]->admit_seq > best->admit_seq)) best = e->slots[s];
    return best;
}

static int live_count(const pl_engine *e) {
    int n = e->pending ? 1 : 0;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s]) n++;
    return n;
}

/* Back to the queue head; prompt + generated tokens are recomputed on re-admission. */
static void preempt(pl_engine *e, pl_req *r) {
    detach(e, r);
    drop_kv(e, r);
    r->next_token = -1;
    r->preemptions++;
    e->m.preemptions++;
    queue_push_front(e, r);
}

/* Dense budget: bytes held now (live caches + staging) plus `extra`, within the budget? */
static int dense_fits(pl_engine *e, size_t extra) {
    if (!e->cfg.kv_budget_bytes) return 1;
    return pl_engine_dense_bytes(e) + extra <= e->cfg.kv_budget_bytes;
}

/* Memory for n more tokens of r. PL_OK, PL_ERR_NO_PAGES (budget exhausted; nothing
 * changed) or another error. */
static int reserve(pl_engine *e, pl_req *r, int n, char *err, size_t err_len) {
    if (e->cfg.kv_mode == PL_KV_DENSE)
        return dense_fits(e, (size_t)n * e->token_bytes * (size_t)e->mc.num_layers) ? PL_OK : PL_ERR_NO_PAGES;
    return pl_kv_seq_reserve(&r->kv, n, err, err_len);
}

static void set_error(pl_req *r, const char *msg) { snprintf(r->error, sizeof r->error, "%s", msg); }

/* ---- one iteration ----------------------------------------------------------------------- */

static int fail_all(pl_engine *e, const char *msg) {
    while (e->pending || live_count(e)) {
        pl_req *r = e->pending ? e->pending : newest_live(e);
        set_error(r, msg);
        finish(e, r, PL_FINISH_ERROR);
    }
    return PL_OK;
}

static int admit(pl_engine *e, char *err, size_t err_len) {
    pl_req *r = e->q_head;
    queue_unlink(e, r);
    r->state = PL_REQ_PENDING;
    e->pending = r;
    r->admit_seq = ++e->admit_counter;
    r->offset = 0;
    r->next_token = -1;
    r->target = r->prompt_len + r->num_generated;
    if (e->has_pools) {
        int rc = pl_kv_seq_init(&r->kv, &e->pools, err, err_len);
        if (rc != PL_OK) {
            set_error(r, err);
            finish(e, r, PL_FINISH_ERROR);
            return rc;
        }
        r->has_kv = 1;
    }
    return PL_OK;
}

static int prefill_chunk(pl_engine *e, char *err, size_t err_len) {
    pl_req *r = e->pending;
    int n = r->target - r->offset;
    if (n > e->cfg.prefill_step) n = e->cfg.prefill_step;
    double t0 = pl_now_seconds();
    int rc = reserve(e, r, n, err, err_len);
    if (rc == PL_ERR_NO_PAGES) {
        if (live_count(e) > 1) return PL_OK; /* decode requests hold the memory: wait for them */
        set_error(r, "the request needs more KV memory than the budget holds");
        finish(e, r, PL_FINISH_ERROR);
        return PL_OK;
    }
    if (rc != PL_OK) return rc;
    int one_len = n, pos = r->offset;
    pl_kv_seq *seq = r->has_kv ? &r->kv : NULL;
    pl_forward_batch fb = {1, r->tokens + r->offset, &one_len, &pos, &seq,
                           e->cfg.kv_mode == PL_KV_PAGED ? NULL : &e->attend_ops, 0};
    e->cur[0] = r;
    e->phase_decode = 0;
    /* The LM head runs only for the chunk that ends the prompt. */
    int32_t t = -1;
    pl_sampler *smp = r->sampler;
    rc = pl_model_forward_sample(e->model, &fb, &smp, r->offset + n == r->target ? &t : NULL, err, err_len);
    /* A chunk without a token may still run on a GPU: its time is prefill time, not the next
     * decode step's (the spec's timer stops once the chunk's result is synchronized). */
    if (rc == PL_OK) rc = pl_model_finish(e->model, err, err_len);
    if (rc != PL_OK) return rc;
    r->offset += n;
    e->iter_prefilled = 1;
    double t1 = pl_now_seconds();
    e->m.prefill_seconds += t1 - t0;
    e->m.prompt_tokens += n;
    e->m.prefill_chunks++;
    pl_eng_snapshot(e);
    if (r->offset == r->target) {
        pl_finish_reason why = PL_FINISH_NONE;
        if (e->cfg.max_seq_len && r->offset >= e->cfg.max_seq_len) why = PL_FINISH_LENGTH;
        else why = accept_token(e, r, t);
        if (why != PL_FINISH_NONE) finish(e, r, why);
    }
    return PL_OK;
}

static void hand_off(pl_engine *e) {
    pl_req *r = e->pending;
    if (!r || r->offset < r->target) return;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (!e->slots[s]) {
            e->slots[s] = r;
            r->slot = s;
            r->state = PL_REQ_SLOT;
            e->pending = NULL;
            return;
        }
}

/* One token of memory for every occupied slot, preempting the newest request on exhaustion. */
static int decode_reserve(pl_engine *e, char *err, size_t err_len) {
    if (e->cfg.kv_mode == PL_KV_DENSE) {
        for (;;) {
            int active = 0, smax = 0;
            size_t grow = 0;
            for (int s = 0; s < e->cfg.batch_size; s++)
                if (e->slots[s]) {
                    active++;
                    if (e->slots[s]->offset + 1 > smax) smax = e->slots[s]->offset + 1;
                }
            if (!active) return PL_OK;
            grow = (size_t)active * e->token_bytes * (size_t)e->mc.num_layers;
            size_t stage = (size_t)active * (size_t)smax * e->token_bytes * (size_t)e->mc.num_layers;
            size_t old_stage = pl_eng_stage_bytes(e); /* replaced by the new batch */
            if (!e->cfg.kv_budget_bytes ||
                pl_engine_dense_bytes(e) - old_stage + grow + stage <= e->cfg.kv_budget_bytes)
                return PL_OK;
            pl_req *v = newest_live(e);
            if (live_count(e) == 1) {
                set_error(v, "the request needs more KV memory than the budget holds");
                finish(e, v, PL_FINISH_ERROR);
                continue;
            }
            preempt(e, v);
        }
    }
    for (int s = 0; s < e->cfg.batch_size; s++) {
        pl_req *r = e->slots[s];
        if (!r) continue;
        for (;;) {
            int rc = pl_kv_seq_reserve(&r->kv, 1, err, err_len);
            if (rc == PL_OK) break;
            if (rc != PL_ERR_NO_PAGES) return rc;
            pl_req *v = newest_live(e);
            if (v == r && live_count(e) == 1) {
                set_error(r, "the request needs more KV memory than the budget holds");
                finish(e, r, PL_FINISH_ERROR);
                break;
            }
            preempt(e, v);
            if (v == r) break;
        }
    }
    return PL_OK;
}

static int decode_step(pl_engine *e, char *err, size_t err_len) {
    double t0 = pl_now_seconds();
    int rc = decode_reserve(e, err, err_len);
    if (rc != PL_OK) return rc;
    int B = e->cfg.batch_size, rows = 0;
    for (int s = 0; s < B; s++) {
        pl_req *r = e->slots[s];
        e->cur[s] = r;
        e->chunk_lens[s] = r ? 1 : 0;
        e->positions[s] = r ? r->offset : 0;
        e->seqs[s] = r && r->has_kv ? &r->kv : NULL;
        if (r) e->tok_buf[rows++] = r->next_token;
    }
    if (!rows) {
        e->gap_chain = 0;
        return PL_OK;
    }
    pl_forward_batch fb = {B, e->tok_buf, e->chunk_lens, e->positions, e->seqs,
                           e->cfg.kv_mode == PL_KV_PAGED ? NULL : &e->attend_ops, 0};
    e->phase_decode = 1;
    for (int s = 0; s < B; s++) e->samplers[s] = e->slots[s] ? e->slots[s]->sampler : NULL;
    rc = pl_model_forward_sample(e->model, &fb, e->samplers, e->toks, err, err_len);
    e->phase_decode = 0;
    if (rc != PL_OK) return rc;
    const int32_t *toks = e->toks;
    double t1 = pl_now_seconds();
    e->m.decode_seconds += t1 - t0;
    e->m.decode_calls++;
    e->m.decode_tokens += rows;
    /* each row's context incl. its new token: the tokens the step's attention reads */
    for (int s = 0; s < B; s++) e->slot_ctx[s] = e->chunk_lens[s] ? e->positions[s] + e->chunk_lens[s] : 0;
    pl_eng_metrics_push_step(e, t1 - t0, e->slot_ctx);
    if (e->gap_chain) pl_eng_metrics_push_gap(e, t1 - e->last_decode_end);
    e->gap_chain = 1;
    e->last_decode_end = t1;
    for (int s = 0; s < B; s++)
        if (e->slots[s]) e->slots[s]->offset++;
    pl_eng_snapshot(e);
    for (int s = 0; s < B; s++) {
        pl_req *r = e->slots[s];
        if (!r) continue;
        pl_finish_reason why = accept_token(e, r, toks[s]);
        if (why != PL_FINISH_NONE) finish(e, r, why);
    }
    return PL_OK;
}

int pl_engine_step(pl_engine *e, char *err, size_t err_len) {
    if (!e) return pl_fail(err, err_len, PL_ERR_INVALID, "step: engine must not be NULL");
    int rc = PL_OK;
    e->iter_prefilled = 0;
    if (!e->pending && e->q_head) rc = admit(e, err, err_len);
    if (rc == PL_OK && e->pending && e->pending->offset < e->pending->target) rc = prefill_chunk(e, err, err_len);
    if (rc == PL_OK) hand_off(e);
    int any = 0;
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s]) any = 1;
    if (rc == PL_OK && any) rc = decode_step(e, err, err_len);
    else if (rc == PL_OK) e->gap_chain = 0; /* idle time is not a decode gap */
    if (rc != PL_OK) fail_all(e, err);
    return rc;
}

int pl_engine_run(pl_engine *e, char *err, size_t err_len) {
    while (pl_engine_busy(e)) {
        int rc = pl_engine_step(e, err, err_len);
        if (rc != PL_OK) return rc;
    }
    return PL_OK;
}

int pl_engine_reset_metrics(pl_engine *e, char *err, size_t err_len) {
    if (!e) return pl_fail(err, err_len, PL_ERR_INVALID, "reset_metrics: engine must not be NULL");
    pl_eng_metrics_clear(e);
    if (live_count(e) == 0) {
        pl_eng_stage_drop(e);
        if (e->has_pools) return pl_kv_pools_reset(&e->pools, err, err_len);
    }
    return PL_OK;
}
