/* Internals of the serving engine shared by its files: requests, the engine state, the KV
 * mode hooks (kv_modes.c) and the metric snapshots (metrics.c). */
#ifndef PL_ENGINE_INTERNAL_H
#define PL_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/engine.h"
#include "pagellm/tokenizer.h"

/* One request's dense cache in one layer: head-major [num_kv_heads, len, head_dim] K and V,
 * reallocated and copied on every append (the week-2 concatenating cache). */
typedef struct pl_dense_cache {
    void *k, *v;
    int len;
} pl_dense_cache;

typedef enum pl_req_state { PL_REQ_QUEUED = 0, PL_REQ_PENDING, PL_REQ_SLOT, PL_REQ_DONE } pl_req_state;

typedef struct pl_req {
    int64_t id;
    pl_req_state state;
    int slot;
    int32_t *tokens;        /* prompt, then generated tokens */
    int prompt_len, max_new_tokens, num_generated;
    int offset;             /* tokens in the KV cache */
    int target;             /* tokens to prefill: prompt + generated at admission (recompute) */
    int32_t next_token;     /* last emitted token, not yet cached; -1: none */
    pl_sampler *sampler;    /* NULL: greedy */
    int32_t *stop;
    int num_stop;
    int ignore_eos;
    pl_kv_seq kv;
    int has_kv;
    pl_dense_cache *dense;  /* [num_layers], dense mode */
    int64_t admit_seq;      /* admission order, for choosing a preemption victim */
    int preemptions;
    pl_finish_reason finish;
    char error[160];
    struct pl_req *prev, *next; /* queue links */
} pl_req;

struct pl_engine {
    pl_model *model;
    const pl_tokenizer *tok; /* optional: text prompts */
    pl_model_config mc;
    pl_engine_config cfg;
    pl_dtype dtype;
    size_t elem;            /* bytes per K/V element */
    size_t token_bytes;     /* K + V bytes of one token in one layer */
    pl_kv_pools pools;
    int has_pools;
    int capped_pages;       /* per layer, 0: growable */

    pl_req *q_head, *q_tail;
    int num_queued;
    pl_req *pending;
    pl_req **slots;         /* [batch_size] */

    pl_request_result *done; /* ring of finished results */
    int done_head, done_count, done_cap;

    int64_t next_id, admit_counter;
    pl_token_callback cb;
    void *cb_ctx;

    /* forward scratch */
    int32_t *tok_buf;
    int tok_cap;
    int *chunk_lens, *positions;
    pl_kv_seq **seqs;
    pl_req **cur;           /* request of each row of the current forward batch */
    pl_sampler **samplers;  /* [batch_size] of the decode step (NULL: greedy) */
    int32_t *toks;          /* [batch_size] its sampled tokens */
    int32_t *slot_ctx;      /* [batch_size] its slots' contexts, for the step's metrics */
    pl_attend_ops attend_ops;
    int phase_decode;

    /* dense / gather staging, per layer: the padded decode batch and its logical bytes */
    void **stage_k, **stage_v;
    size_t *stage_cap, *stage_bytes;
    void *qbuf, *obuf, *gk, *gv;
    size_t qbuf_cap, obuf_cap, g_cap, gv_cap;
    int32_t *bt, *ctx_lens;
    /* readable FP32 attention scratch: widened Q, the additive mask, f32 output, and the
     * score rows of each thread (K/V are widened as they are read) */
    float *rq, *rmask, *rout, *rscores;
    size_t rq_cap, rmask_cap, rout_cap, rscores_cap;
    /* A CUDA model in dense / paged-gather mode: the device side (src/cuda/kv_modes_cuda.h)
     * that owns the device scratch; the dense caches and stage_k / stage_v then hold device
     * memory from it. NULL on the CPU. */
    struct pl_kvc *kvc;

    /* metrics */
    pl_engine_metrics m;
    int steps_cap, gaps_cap, step_ctx_cap;
    double last_decode_end;
    int gap_chain;
    int iter_prefilled; /* this iteration ran a prefill chunk (step_after_prefill) */
};

/* kv_modes.c */
int pl_eng_attend(void *ctx, const pl_attend_call *call, char *err, size_t err_len);
int pl_eng_modes_init(pl_engine *e, char *err, size_t err_len);
void pl_eng_modes_free(pl_engine *e);
void pl_eng_dense_free(pl_engine *e, pl_req *r);
/* Bytes of the request's dense caches (all layers). */
size_t pl_eng_dense_req_bytes(const pl_engine *e, const pl_req *r);
/* Logical bytes of the most recent padded batches (all layers). */
size_t pl_eng_stage_bytes(const pl_engine *e);
void pl_eng_stage_drop(pl_engine *e);

/* metrics.c */
/* One decode step's sample: its seconds, and each of the batch's cfg.batch_size slots' context
 * (0 for an empty slot), which give its context tokens and rows. */
int pl_eng_metrics_push_step(pl_engine *e, double seconds, const int32_t *slot_contexts);
int pl_eng_metrics_push_gap(pl_engine *e, double seconds);
void pl_eng_snapshot(pl_engine *e);
void pl_eng_metrics_clear(pl_engine *e);

#endif
