/* Qwen3 causal LM: configuration, weights (Hugging Face safetensors checkpoints or a
 * synthetic in-memory model), the forward pass over paged KV caches, and the sampler.
 *
 * The forward pass is written once and calls a backend's table of operations (CPU here,
 * CUDA in src/cuda/). Attention goes through pl_attend_ops: the default stores K/V in the
 * sequences' page pools and calls pl_paged_attention; the serving engine supplies other
 * KV modes (dense, paged-gather) through the same hook. */
#ifndef PAGELLM_MODEL_H
#define PAGELLM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/attention.h"
#include "pagellm/kv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PL_MAX_EOS_IDS 8

typedef struct pl_model_config {
    char architecture[64];     /* "Qwen3ForCausalLM" */
    int vocab_size, hidden_size, num_layers, num_heads, num_kv_heads, head_dim;
    int intermediate_size, max_position_embeddings;
    float rms_norm_eps;
    double rope_theta;
    int tie_word_embeddings;
    int num_eos;
    int32_t eos_ids[PL_MAX_EOS_IDS];
    int32_t bos_id;            /* -1 when none */
} pl_model_config;

typedef enum pl_device { PL_DEVICE_CPU = 0, PL_DEVICE_CUDA = 1 } pl_device;

typedef struct pl_model_options {
    pl_dtype act_dtype;   /* PL_BF16 (default: bf16 activations and K/V, f32 accumulation) or PL_F32 */
    pl_device device;     /* PL_DEVICE_CPU by default */
    int num_threads;      /* 0: all cores */
    int progress;         /* nonzero: progress bar on stderr while loading */
    int cuda_attn_splits; /* PL_DEVICE_CUDA: how the decode attention picks its context splits: 0
                             (default) from each step's own contexts, 1 from the batch's shapes alone
                             (docs/PERF.md, thirty-sixth and thirty-seventh sessions) */
} pl_model_options;

typedef struct pl_model pl_model;

/* Loads a Hugging Face model directory (config.json, model.safetensors or a sharded index,
 * generation_config.json when present). Messages name file, tensor, expected and found. */
int pl_model_load(const char *dir, const pl_model_options *opts, pl_model **out, char *err, size_t err_len);
/* Names of the built-in synthetic shapes: "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b",
 * and small test shapes; NULL-terminated. */
const char *const *pl_model_shape_names(void);
int pl_model_shape_config(const char *shape, pl_model_config *cfg, char *err, size_t err_len);
/* A model of a named shape with random weights at sensible scales, built in memory. */
int pl_model_create_synthetic(const char *shape, uint64_t seed, const pl_model_options *opts, pl_model **out,
                              char *err, size_t err_len);
/* Writes the model as a Hugging Face directory (config.json + bf16 model.safetensors). */
int pl_model_save(const pl_model *model, const char *dir, char *err, size_t err_len);
void pl_model_free(pl_model *model);
const pl_model_config *pl_model_get_config(const pl_model *model);
const pl_model_options *pl_model_get_options(const pl_model *model);
/* Bytes of weights one forward step reads (for rooflines). */
size_t pl_model_weight_bytes(const pl_model *model);

/* Page pools that fit the model: one per layer, K/V dtype = the activation dtype. With
 * device = PL_DEVICE_CUDA the storage is device memory owned through the model's backend:
 * destroy the pools before the model. */
int pl_model_create_pools(const pl_model *model, int page_size, pl_pool_mode mode, int capped_pages,
                          pl_kv_pools *out, char *err, size_t err_len);

/* One layer's attention work inside a forward pass. Rows are token-major, sequences
 * concatenated: sequence i owns rows [row_start[i], row_start[i] + chunk_lens[i]), whose
 * tokens sit at positions positions[i] + 0 .. chunk_lens[i] - 1. */
typedef struct pl_attend_call {
    int layer;
    int num_seqs;
    const int *chunk_lens;     /* [num_seqs], 0 marks an empty slot */
    const int *row_start;      /* [num_seqs] */
    const int *positions;      /* [num_seqs] tokens already cached before this chunk */
    pl_dtype dtype;            /* activation dtype of q, k, v, out */
    int num_heads, num_kv_heads, head_dim;
    float scale;
    const void *q;             /* [rows, num_heads, head_dim], after q_norm and RoPE */
    const void *k, *v;         /* [rows, num_kv_heads, head_dim], after k_norm and RoPE */
    size_t qkv_token_stride;   /* elements between tokens of q, k and v (they may share a buffer) */
    void *out;                 /* [rows, num_heads, head_dim] contiguous */
} pl_attend_call;

typedef struct pl_attend_ops {
    /* Stores the call's K/V in this layer's cache and writes attention output. */
    int (*attend)(void *ctx, const pl_attend_call *call, char *err, size_t err_len);
    void *ctx;
} pl_attend_ops;

typedef struct pl_forward_batch {
    int num_seqs;
    const int32_t *tokens;     /* [sum(chunk_lens)] concatenated */
    const int *chunk_lens;     /* [num_seqs]; 0 = empty slot (no rows, no cache change) */
    const int *positions;      /* [num_seqs] start position of each chunk */
    pl_kv_seq *const *seqs;    /* [num_seqs] paged caches (default attend); NULL entries for empty slots */
    const pl_attend_ops *attend; /* NULL: direct paged attention on seqs */
    int all_logits;            /* 0: each sequence's last row -> logits [num_seqs, vocab] (empty slot rows
                                  left untouched); 1: every row -> [sum(chunk_lens), vocab] */
} pl_forward_batch;

/* Runs the model on the batch. With the default attend the caller has reserved pages for the
 * new tokens (pl_kv_seq_reserve) or the forward reserves them itself; K/V are committed to
 * every layer's cache. logits: float32. */
int pl_model_forward(pl_model *model, const pl_forward_batch *batch, float *logits, char *err, size_t err_len);

/* Waits until the device work that the model's calls have enqueued so far is done (returns at
 * once on the CPU, whose calls finish before they return). pl_model_forward_sample with tokens
 * NULL may return while its chunk still runs on a GPU; a caller that times the chunk (the
 * engine's prefill time) calls this before stopping its clock. */
int pl_model_finish(pl_model *model, char *err, size_t err_len);

typedef struct pl_sampler pl_sampler;

/* The forward pass, then the next token of each non-empty sequence sampled from its last
 * row where the model runs (on a GPU only the ids come back): tokens[i] is what
 * pl_sampler_sample(samplers[i], logits row i) would give (greedy argmax where samplers is
 * NULL or samplers[i] is NULL), -1 for an empty slot. tokens NULL: no LM head at all (a
 * prefill chunk that ends inside the prompt). batch->all_logits must be 0. On failure the
 * samplers' generators are left as they were. */
int pl_model_forward_sample(pl_model *model, const pl_forward_batch *batch, pl_sampler *const *samplers,
                            int32_t *tokens, char *err, size_t err_len);

/* Sampling: greedy when temperature <= 0; else temperature, then top-k (0 = off), then top-p
 * (1 = off), drawing from a seeded generator so runs reproduce. */
typedef struct pl_sampler_params {
    float temperature;
    int top_k;
    float top_p;
    uint64_t seed;
} pl_sampler_params;

int pl_sampler_create(const pl_sampler_params *params, int vocab_size, pl_sampler **out, char *err, size_t err_len);
void pl_sampler_free(pl_sampler *s);
int32_t pl_sampler_sample(pl_sampler *s, const float *logits);
int32_t pl_argmax(const float *logits, int n);

#ifdef __cplusplus
}
#endif
#endif
