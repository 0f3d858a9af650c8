/* Internals of the Qwen3 model shared by the model module's files and its tests: the
 * backend operation table the forward pass is written against, the weight layout of a
 * model, and helpers for configs and weight sources. */
#ifndef PL_MODEL_INTERNAL_H
#define PL_MODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"
#include "pagellm/model.h"

/* graph_end's answer when a step must be redone eagerly (positive: not a pl_status). */
#define PL_GRAPH_RETRY 1000
#define PL_GRAPH_RECAPTURE 1001 /* as PL_GRAPH_RETRY, but the redo goes through graph_begin again: the backend captures it */

/* One row's sampling request: the sampler's parameters and its uniform draw u in [0, 1)
 * (the host keeps the seeded generator, so every backend makes the same choice). */
typedef struct pl_sample_req {
    float temperature; /* <= 0: greedy */
    int top_k;         /* 0 = off */
    float top_p;       /* 1 = off */
    double u;
} pl_sample_req;

/* Sampler internals (sampler.c). pl_sampler_next fills the parameters and the next draw
 * (greedy when s is NULL), advancing the generator as pl_sampler_sample would; the rng
 * get/set pair undoes it. pl_sample_row is the choice for one row of V logits given the
 * request (idx, prob: V-element scratch). */
void pl_sampler_next(pl_sampler *s, pl_sample_req *out);
int pl_sampler_greedy(const pl_sampler *s); /* NULL or temperature <= 0: argmax, no draw */
void pl_sampler_get_rng(const pl_sampler *s, pl_mt19937 *state);
void pl_sampler_set_rng(pl_sampler *s, const pl_mt19937 *state);
int32_t pl_sample_row(const pl_sample_req *q, const float *logits, int V, int32_t *idx, float *prob);

/* Element types a weight source may hold (safetensors F32 / BF16 / F16). */
typedef enum pl_src_dtype { PL_SRC_F32 = 0, PL_SRC_BF16 = 1, PL_SRC_F16 = 2 } pl_src_dtype;

/* A row-major [rows, cols] tensor in host memory (mapped file or buffer), or a generator
 * (gen != NULL: row r is gen(src, r, out), e.g. synthetic random weights). */
typedef struct pl_weight_src {
    pl_src_dtype dtype;
    int rows, cols;
    const void *data;
    void (*gen)(const struct pl_weight_src *src, int r, float *out);
    uint64_t key;        /* generator state: seed and tensor key */
    float scale, offset; /* generator: value = offset + scale * N(0, 1) */
} pl_weight_src;

/* Row r of a source widened to float (exact for all three dtypes). */
void pl_weight_src_row(const pl_weight_src *src, int r, float *out);
float pl_f16_to_f32(uint16_t h);
uint16_t pl_f32_to_f16(float f);

/* Operations a backend supplies. Activations are device buffers in the activation dtype,
 * row-major; weights are backend handles made by weight_create. Every op returns PL_OK or
 * a pl_status with a message. */
typedef struct pl_backend_ops {
    const char *name;
    /* matrix: [rows, cols] weight used as y = x W^T (rows = outputs); vector: rows == 1. */
    int (*weight_create)(void *ctx, const pl_weight_src *const *parts, int num_parts, int is_matrix, void **out,
                         char *err, size_t err_len);
    void (*weight_free)(void *ctx, void *w);
    /* Logical row r of a weight as float (for saving and tests). */
    int (*weight_row)(void *ctx, const void *w, int r, float *out, char *err, size_t err_len);
    size_t (*weight_bytes)(void *ctx, const void *w);
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    /* out[i, :] = W[tokens[i], :] */
    int (*embed)(void *ctx, const void *w, const int32_t *tokens, int n, void *out, char *err, size_t err_len);
    /* out = x / rms(x) * w over dim, per row (x, out: [rows, dim]) */
    int (*rmsnorm)(void *ctx, const void *x, const void *w, int rows, int dim, float eps, void *out);
    /* out[rows, W.rows] = x[rows, W.cols] W^T; out_f32: write float32 instead of the act dtype */
    int (*matmul)(void *ctx, const void *x, int rows, const void *w, void *out, int out_f32, char *err,
                  size_t err_len);
    /* RoPE table for the rows of one forward call: cs[r * head_dim + i] = cos, and
     * cs[r * head_dim + head_dim/2 + i] = sin, of pos[r] * theta^(-2i/head_dim). */
    int (*rope_table)(void *ctx, const int32_t *pos, int rows, int head_dim, double theta, float *cs);
    /* On qkv rows (q heads, then k heads, then v heads; row_stride elements apart): per-head
     * RMSNorm of q and k with qn / kn, then half-split RoPE from the table, in place; with
     * q_out the q heads go to q_out instead (rows of nq * head_dim, the attention's query
     * layout: no copy of them afterwards). */
    int (*qk_norm_rope)(void *ctx, void *qkv, int rows, size_t row_stride, int nq, int nkv, int head_dim,
                        const void *qn, const void *kn, float eps, const float *cs, void *q_out);
    /* out[r, i] = silu(gu[r, i]) * gu[r, inter + i] */
    int (*swiglu)(void *ctx, const void *gu, int rows, int inter, void *out);
    /* h += x, n elements */
    int (*add)(void *ctx, void *h, const void *x, size_t n);
    /* Optional fusion (NULL: add, then rmsnorm): h += x over [rows, dim], then out = rmsnorm(h) * w. */
    int (*add_rmsnorm)(void *ctx, void *h, const void *x, const void *w, int rows, int dim, float eps, void *out);
    /* Appends a chunk of K/V rows (backend memory) to one layer's sequence cache. CPU:
     * pl_seq_cache_append; a device backend writes reserved pages and commits. */
    int (*kv_append)(void *ctx, pl_seq_cache *cache, const pl_kv_chunk *chunk, char *err, size_t err_len);
    /* Paged attention on backend memory. CPU: pl_paged_attention. */
    int (*paged_attention)(void *ctx, const pl_paged_attention_args *args, char *err, size_t err_len);
    /* dst row i (dst_stride apart) = src row i (src_stride apart), width elements */
    int (*copy_rows)(void *ctx, void *dst, size_t dst_stride, const void *src, size_t src_stride, int rows,
                     int width);
    /* tokens[r] = pl_sample_row(&reqs[r], row r of logits) for f32 logits [rows, vocab] in
     * backend memory; tokens and reqs are host arrays. */
    int (*sample)(void *ctx, const float *logits, int rows, int vocab, const pl_sample_req *reqs, int32_t *tokens,
                  char *err, size_t err_len);
    /* Optional fusion of the LM head and greedy sampling (NULL, or PL_ERR_UNSUPPORTED with
     * nothing launched: matmul with f32 logits, then sample): enqueues the pl_argmax of each
     * row of x W^T without storing the logits, and may run inside a graph bracket;
     * head_greedy_tokens (after graph_end) waits for it and copies the rows' ids to tokens
     * (a host array). */
    int (*head_greedy)(void *ctx, const void *x, int rows, const void *w, char *err, size_t err_len);
    int (*head_greedy_tokens)(void *ctx, int rows, int32_t *tokens, char *err, size_t err_len);
    /* Optional CUDA-graph bracket of a decode step (NULL: none). graph_begin(key) returns PL_OK
     * when the step is bracketed; graph_end(body_rc) must then follow before anything reads
     * results on the host, and returns PL_OK, an error, or PL_GRAPH_RETRY: undo the step and
     * run it again without the bracket (what of it reached the device, the redo computes again
     * identically), or PL_GRAPH_RECAPTURE: undo it and run it again bracketed (the backend
     * records it as a new graph; a redo that is undone again runs without the bracket). graph_cut (optional, inside a bracket): a layer ended; the backend may
     * launch the step's work so far while the forward pass walks the rest. */
    int (*graph_begin)(void *ctx, uint64_t key);
    int (*graph_cut)(void *ctx);
    int (*graph_end)(void *ctx, int body_rc);
    /* Optional (NULL: every op has finished when it returns, as on the CPU): waits until all work
     * enqueued so far has run, and reports what failed on the way. A prefill chunk that ends
     * inside the prompt reads nothing back, so without this its device time would land in the
     * next decode step's timer. */
    int (*finish)(void *ctx, char *err, size_t err_len);
    /* Message of the last failed op that has no err argument (NULL: ops without one never fail). */
    const char *(*last_error)(void *ctx);
} pl_backend_ops;

typedef struct pl_cpu_backend {
    pl_dtype act;
    int threads;
    int kernel; /* 0: best this CPU has; else a forced level (test hook) */
} pl_cpu_backend;

/* The CPU backend table; ctx is a pl_cpu_backend. */
const pl_backend_ops *pl_cpu_backend_ops(void);
/* The matmul kernel picked on this CPU: "avx512-bf16", "avx2", "portable". */
const char *pl_cpu_matmul_kernel_name(void);
/* Test hook: 0 auto, 1 portable, 2 avx2, 3 avx512-bf16 (clamped to what the CPU has). */
void pl_cpu_backend_force_kernel(pl_cpu_backend *b, int level);

typedef struct pl_layer_weights {
    void *in_norm, *post_norm, *q_norm, *k_norm; /* vectors */
    void *qkv;     /* [nq*D + 2*nkv*D, hidden]: q_proj, k_proj, v_proj stacked */
    void *o;       /* [hidden, nq*D] */
    void *gate_up; /* [2*inter, hidden]: gate_proj then up_proj */
    void *down;    /* [hidden, inter] */
} pl_layer_weights;

struct pl_model {
    pl_model_config cfg;
    pl_model_options opts;
    const pl_backend_ops *ops;
    void *bctx;
    pl_cpu_backend cpu;
    void *embed;   /* [vocab, hidden] */
    void *lm_head; /* == embed when tied */
    void *final_norm;
    pl_layer_weights *layers;
    size_t weight_bytes;
    /* workspace, grown on demand */
    size_t ws_rows;
    void *h, *a, *qkv, *attn, *gu, *mlp, *tmp, *qbuf;
    float *rope; /* [rows, head_dim] cos / sin table (backend memory) */
    float *logit_buf;
    size_t logit_rows;
    float *dev_logits; /* [dev_logit_rows, vocab] f32 in backend memory, for sampling there */
    size_t dev_logit_rows;
};

/* Tensor names of a Qwen3 checkpoint: fills name for tensor index idx of layer (or global
 * when layer < 0). */
enum {
    PL_T_Q = 0, PL_T_K, PL_T_V, PL_T_O, PL_T_GATE, PL_T_UP, PL_T_DOWN, PL_T_IN_NORM, PL_T_POST_NORM,
    PL_T_Q_NORM, PL_T_K_NORM, PL_T_LAYER_COUNT
};
enum { PL_T_EMBED = 0, PL_T_FINAL_NORM, PL_T_LM_HEAD, PL_T_GLOBAL_COUNT };
void pl_tensor_name(int layer, int idx, char *name, size_t len);
/* Expected [rows, cols] (cols = 1 and rows = length for vectors; returns 1 for vectors). */
int pl_tensor_shape(const pl_model_config *cfg, int layer, int idx, int *rows, int *cols);

/* Config helpers (config.c). */
int pl_config_validate(const pl_model_config *cfg, char *err, size_t err_len);
/* Parses config.json text (and optional generation_config.json text, may be NULL).
 * file names appear in messages. torch_dtype gets the checkpoint's declared dtype. */
int pl_config_parse(const char *json, size_t len, const char *file, pl_model_config *cfg, char *err,
                    size_t err_len);
int pl_generation_config_parse(const char *json, size_t len, const char *file, pl_model_config *cfg, char *err,
                               size_t err_len);
/* Reads dir/config.json and dir/generation_config.json (when present). */
int pl_model_read_config(const char *dir, pl_model_config *cfg, char *err, size_t err_len);
/* Writes config.json for cfg (dtype "bfloat16"). */
int pl_config_write(const pl_model_config *cfg, const char *path, char *err, size_t err_len);

/* Builds a model from a tensor source callback: get(ctx, layer, idx, parts) fills the source
 * of one tensor (weights.c). */
typedef int (*pl_tensor_get_fn)(void *ctx, int layer, int idx, pl_weight_src *src, char *err, size_t err_len);
int pl_model_build(const pl_model_config *cfg, const pl_model_options *opts, pl_tensor_get_fn get, void *get_ctx,
                   pl_model **out, char *err, size_t err_len);
/* Logical weight access for saving and reference checks: row r of tensor (layer, idx). */
int pl_model_tensor_row(const pl_model *m, int layer, int idx, int r, float *out, char *err, size_t err_len);

/* Safetensors (safetensors.c). */
typedef struct pl_st_tensor {
    char name[128];
    pl_src_dtype dtype;
    int ndim;
    int64_t shape[4];
    const void *data;
    size_t nbytes;
    int file; /* index into the set's files */
} pl_st_tensor;

typedef struct pl_st_set {
    int num_files;
    char **paths;
    void **maps;
    size_t *map_lens;
    int num_tensors;
    pl_st_tensor *tensors;
} pl_st_set;

/* Parses one safetensors header from a buffer of the whole file (for fuzzing and loading).
 * Appends tensors to set with file index fi. */
int pl_st_parse(const uint8_t *buf, size_t len, const char *file, int fi, pl_st_set *set, char *err,
                size_t err_len);
/* Opens dir/model.safetensors or dir/model.safetensors.index.json (all shards mapped). */
int pl_st_open_dir(const char *dir, pl_st_set *set, char *err, size_t err_len);
void pl_st_close(pl_st_set *set);
const pl_st_tensor *pl_st_find(const pl_st_set *set, const char *name);

#endif
