/* The serving engine: continuous batching with chunked prefill over the model's page pools
 * (spec 4.2), three KV modes for the comparison of spec 5.2, serving metrics (spec 5.1),
 * and the benchmark's request trace (a bit-exact port of the reference generator).
 *
 * One iteration (pl_engine_step): admit the queue head when no prefill is pending, run at
 * most one prefill chunk of <= prefill_step tokens, hand a fully prefilled request to the
 * first free decode slot, then one decode token for every occupied slot. Pages go back to
 * the pools when a request finishes. Single-threaded: call from one thread. */
#ifndef PAGELLM_ENGINE_H
#define PAGELLM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/model.h"
#include "pagellm/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- trace ---------------------------------------------------------------------------- */

typedef struct pl_trace_request {
    int request_id;
    int prompt_len;
    int32_t *prompt;       /* [prompt_len] */
    int max_new_tokens;
} pl_trace_request;

typedef struct pl_trace {
    int num_requests;
    pl_trace_request *requests;
} pl_trace;

typedef struct pl_trace_config {
    int num_seqs;
    int min_input_len, max_input_len;
    int min_output_len, max_output_len;
    int vocab_size;        /* token ids drawn from [256, vocab_size - 1] */
    int32_t eos_id;        /* a drawn id equal to it is replaced (reference rule); -1: none */
    uint64_t seed;
} pl_trace_config;

/* Python random.Random(seed): per request prompt_len = randint(min_in, max_in), then
 * max_new_tokens = randint(min_out, max_out), then prompt_len ids randint(256, vocab - 1). */
int pl_trace_generate(const pl_trace_config *cfg, pl_trace *out, char *err, size_t err_len);
void pl_trace_free(pl_trace *trace);
/* The trace as compact JSON with sorted keys (the hashed text); *out is malloc'ed. */
int pl_trace_to_json(const pl_trace *trace, char **out, size_t *out_len, char *err, size_t err_len);
/* SHA-256 of pl_trace_to_json, 64 hex characters. */
int pl_trace_sha256(const pl_trace *trace, char hex[65], char *err, size_t err_len);
/* File form: either the bare trace list or an object with a "request_trace" list. */
int pl_trace_save(const pl_trace *trace, const char *path, char *err, size_t err_len);
int pl_trace_load(const char *path, pl_trace *out, char *err, size_t err_len);
/* Sums over the trace. */
int64_t pl_trace_prompt_tokens(const pl_trace *trace);
int64_t pl_trace_output_tokens(const pl_trace *trace);

/* ---- engine --------------------------------------------------------------------------- */

typedef enum pl_kv_mode {
    PL_KV_DENSE = 0,        /* per-request concatenating dense cache + padded dense decode batch */
    PL_KV_PAGED_GATHER = 1, /* page pools as storage, gathered to dense K/V for attention */
    PL_KV_PAGED = 2         /* pl_paged_attention straight from the pools (the model's default) */
} pl_kv_mode;

const char *pl_kv_mode_name(pl_kv_mode mode); /* "dense", "paged-gather", "paged" */
int pl_kv_mode_parse(const char *name, pl_kv_mode *out);  /* PL_OK or PL_ERR_INVALID */

typedef enum pl_finish_reason {
    PL_FINISH_NONE = 0,   /* still running */
    PL_FINISH_EOS,
    PL_FINISH_LENGTH,     /* max_new_tokens or max_seq_len reached */
    PL_FINISH_STOP,       /* a stop token */
    PL_FINISH_CANCELLED,
    PL_FINISH_ERROR
} pl_finish_reason;

const char *pl_finish_reason_name(pl_finish_reason r); /* "eos", "length", ... */

typedef struct pl_engine_config {
    pl_kv_mode kv_mode;
    int batch_size;        /* decode slots (> 0) */
    int prefill_step;      /* tokens per prefill chunk (> 0) */
    int page_size;         /* tokens per page (paged modes) */
    /* KV budget in bytes, 0 = unbounded. Paged modes: capped pools of
     * budget / (num_layers * page bytes) pages per layer. Dense: live dense caches plus the
     * padded decode batch may not exceed it. Either way a request that cannot get memory
     * preempts the most recently admitted running request. */
    size_t kv_budget_bytes;
    int max_seq_len;       /* prompt + generated bound, 0 = none */
    /* A model on CUDA with kv_budget_bytes 0 (paged modes): capped pools of this fraction of
     * the free device memory (after weights, less 2 GiB for workspaces), allocated up front
     * as a GPU server does; 0 means 0.85. Growing device pools would stall the stream at
     * every growth. */
    double kv_budget_fraction;
} pl_engine_config;

typedef struct pl_request_params {
    const int32_t *prompt;     /* copied at submit */
    int prompt_len;            /* > 0 */
    int max_new_tokens;        /* > 0 */
    pl_sampler_params sampling; /* temperature <= 0: greedy */
    const int32_t *stop_tokens; /* copied; finishing on one, not emitted */
    int num_stop_tokens;
    int ignore_eos;            /* benchmark mode: never compare to the model's EOS ids */
    /* Instead of ids (prompt NULL): UTF-8 text encoded at submit with the engine's tokenizer
     * (pl_engine_set_tokenizer), special tokens such as <|im_start|> matched in the text. */
    const char *prompt_text;
} pl_request_params;

/* Called for every emitted token (finish == PL_FINISH_NONE, token >= 0) and once when a
 * request ends (finish != NONE, token -1). */
typedef void (*pl_token_callback)(void *ctx, int64_t request_id, int32_t token, pl_finish_reason finish);

typedef struct pl_request_result {
    int64_t request_id;
    pl_finish_reason finish;
    int num_tokens;
    int32_t *tokens;           /* emitted tokens, malloc'ed: pl_request_result_free */
    int preemptions;           /* times it was preempted and recomputed */
    char error[160];           /* PL_FINISH_ERROR: the message */
} pl_request_result;

void pl_request_result_free(pl_request_result *r);

/* Spec 5.1 metrics of everything run since create or the last pl_engine_reset_metrics. */
typedef struct pl_engine_metrics {
    int64_t prompt_tokens;         /* prefill rows computed (recomputation included) */
    int64_t prefill_chunks;
    double prefill_seconds;
    int64_t decode_tokens;         /* tokens produced by batched decode calls */
    int64_t decode_calls;
    double decode_seconds;
    int64_t generated_tokens;      /* all emitted tokens (first tokens included) */
    int64_t finished_requests;
    int64_t preemptions;
    int peak_active_requests;      /* slots + pending prefill, at snapshots */
    size_t peak_kv_bytes;          /* max over snapshots of max(dense bytes, paged storage bytes) */
    size_t peak_dense_bytes, peak_paged_bytes;
    int64_t peak_live_pages, peak_capacity_pages; /* summed over layers */
    int64_t tail_waste_slots, tail_live_slots;    /* at the snapshot with most tail slots */
    double tail_waste_bytes;
    int64_t reused_page_allocations, storage_growths, copied_pages_on_growth;
    int64_t paged_growth_copy_bytes, dense_growth_copy_bytes, dense_staging_copy_bytes;
    /* paged-gather only: pages gathered back to dense K/V for prefill chunks (outside the
     * spec's logical copy volume, which counts decode staging only) */
    int64_t gather_prefill_copy_bytes;
    /* decode step and decode completion gap samples, seconds */
    int num_step_samples, num_gap_samples;
    double *step_samples, *gap_samples; /* owned by the engine; valid until the next step */
    /* beside step_samples[i]: the tokens that decode step's attention read, summed over its
     * rows (each row's context including its new token); owned by the engine like them */
    int64_t *step_context_tokens;
    int *step_rows; /* beside step_samples[i]: that step's rows (occupied slots); owned likewise */
    /* beside step_samples[i]: each batch slot's context in that step at [i * batch_size + slot]
     * (including its new token; 0 for an empty slot), so a step's shape can be replayed; owned
     * likewise */
    int32_t *step_slot_contexts;
    /* beside step_samples[i]: 1 when a prefill chunk ran in the same engine iteration just
     * before that decode step (its device work is outside the step's timer), else 0 */
    int *step_after_prefill;
} pl_engine_metrics;

typedef struct pl_engine pl_engine;

/* The model is borrowed (outlives the engine). Creates the page pools for paged modes. */
int pl_engine_create(pl_model *model, const pl_engine_config *cfg, pl_engine **out, char *err, size_t err_len);
/* Cancels nothing: releases every request and the pools. */
void pl_engine_destroy(pl_engine *e);
void pl_engine_set_callback(pl_engine *e, pl_token_callback cb, void *ctx);
/* Lets requests carry text prompts (pl_request_params.prompt_text). The tokenizer is
 * borrowed and must outlive the engine; NULL removes it. */
void pl_engine_set_tokenizer(pl_engine *e, const pl_tokenizer *tok);
/* Queues a request (allowed at any time, also between steps of a running batch). */
int pl_engine_submit(pl_engine *e, const pl_request_params *p, int64_t *request_id, char *err, size_t err_len);
/* Ends a queued or running request with PL_FINISH_CANCELLED, releasing its pages.
 * PL_ERR_INVALID if the id is unknown or already finished. */
int pl_engine_cancel(pl_engine *e, int64_t request_id, char *err, size_t err_len);
/* One scheduler iteration. On a model failure every running request ends with
 * PL_FINISH_ERROR (pages released) and the status is returned; the queue is kept. */
int pl_engine_step(pl_engine *e, char *err, size_t err_len);
/* Steps until nothing is queued or running. */
int pl_engine_run(pl_engine *e, char *err, size_t err_len);
/* Nonzero while something is queued or running. */
int pl_engine_busy(const pl_engine *e);
/* Counts: queued (not yet started or preempted), running (pending prefill + decode slots). */
void pl_engine_counts(const pl_engine *e, int *queued, int *running, int *finished_unpolled);
/* Pops the oldest finished request's result; returns 1 if one was popped, else 0. */
int pl_engine_poll(pl_engine *e, pl_request_result *out);

void pl_engine_get_metrics(const pl_engine *e, pl_engine_metrics *m);
/* Zeroes the metrics and, with no request running, resets the pools (warmup capacity and
 * counters dropped, as the reference does before the measured run). */
int pl_engine_reset_metrics(pl_engine *e, char *err, size_t err_len);
/* The paged pools (NULL in dense mode) for checks. */
const pl_kv_pools *pl_engine_pools(const pl_engine *e);
/* Bytes held by live dense caches and staging buffers (dense modes), for checks. */
size_t pl_engine_dense_bytes(const pl_engine *e);

#ifdef __cplusplus
}
#endif
#endif
