/* Model weights: Qwen3 tensor names and shapes, building a model from tensor sources
 * through the backend, accessors, and page pools that fit the model. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/backend_cuda.h"
#include "model/model_internal.h"

void pl_tensor_name(int layer, int idx, char *name, size_t len) {
    static const char *const layer_names[PL_T_LAYER_COUNT] = {
        "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
        "self_attn.o_proj.weight", "mlp.gate_proj.weight",    "mlp.up_proj.weight",
        "mlp.down_proj.weight",    "input_layernorm.weight",  "post_attention_layernorm.weight",
        "self_attn.q_norm.weight", "self_attn.k_norm.weight"};
    static const char *const global_names[PL_T_GLOBAL_COUNT] = {"model.embed_tokens.weight", "model.norm.weight",
                                                                "lm_head.weight"};
    if (layer >= 0)
        snprintf(name, len, "model.layers.%d.%s", layer, layer_names[idx]);
    else
        snprintf(name, len, "%s", global_names[idx]);
}

int pl_tensor_shape(const pl_model_config *c, int layer, int idx, int *rows, int *cols) {
    int qd = c->num_heads * c->head_dim, kd = c->num_kv_heads * c->head_dim;
    int r = 1, k = 0;
    if (layer >= 0) {
        switch (idx) {
        case PL_T_Q: r = qd, k = c->hidden_size; break;
        case PL_T_K:
        case PL_T_V: r = kd, k = c->hidden_size; break;
        case PL_T_O: r = c->hidden_size, k = qd; break;
        case PL_T_GATE:
        case PL_T_UP: r = c->intermediate_size, k = c->hidden_size; break;
        case PL_T_DOWN: r = c->hidden_size, k = c->intermediate_size; break;
        case PL_T_IN_NORM:
        case PL_T_POST_NORM: k = c->hidden_size; break;
        default: k = c->head_dim; break; /* q_norm, k_norm */
        }
        *rows = r;
        *cols = k;
        return idx >= PL_T_IN_NORM;
    }
    if (idx == PL_T_FINAL_NORM) {
        *rows = 1;
        *cols = c->hidden_size;
        return 1;
    }
    *rows = c->vocab_size;
    *cols = c->hidden_size;
    return 0;
}

static void free_weights(pl_model *m) {
    const pl_backend_ops *o = m->ops;
    if (m->layers) {
        for (int l = 0; l < m->cfg.num_layers; l++) {
            pl_layer_weights *w = &m->layers[l];
            void *all[] = {w->in_norm, w->post_norm, w->q_norm, w->k_norm, w->qkv, w->o, w->gate_up, w->down};
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                if (all[i]) o->weight_free(m->bctx, all[i]);
        }
        free(m->layers);
    }
    if (m->lm_head && m->lm_head != m->embed) o->weight_free(m->bctx, m->lm_head);
    if (m->embed) o->weight_free(m->bctx, m->embed);
    if (m->final_norm) o->weight_free(m->bctx, m->final_norm);
}

void pl_model_free(pl_model *m) {
    if (!m) return;
    free_weights(m);
    void *ws[] = {m->h, m->a, m->qkv, m->attn, m->gu, m->mlp, m->tmp, m->qbuf, m->rope, m->dev_logits};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
        if (ws[i]) m->ops->free(m->bctx, ws[i]);
    free(m->logit_buf);
    if (m->opts.device == PL_DEVICE_CUDA) pl_cuda_backend_destroy(m->bctx);
    free(m);
}

/* Fetches and checks one tensor's source against the expected shape. */
static int fetch(const pl_model *m, pl_tensor_get_fn get, void *ctx, int layer, int idx, pl_weight_src *src, char *err,
                 size_t err_len) {
    int rows, cols;
    pl_tensor_shape(&m->cfg, layer, idx, &rows, &cols);
    int rc = get(ctx, layer, idx, src, err, err_len);
    if (rc) return rc;
    if (src->rows != rows || src->cols != cols) {
        char name[160];
        pl_tensor_name(layer, idx, name, sizeof name);
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: shape [%d, %d], expected [%d, %d]", name, src->rows,
                       src->cols, rows, cols);
    }
    return PL_OK;
}

static int make(pl_model *m, pl_tensor_get_fn get, void *ctx, int layer, const int *idx, int n, int is_matrix,
                void **out, char *err, size_t err_len) {
    pl_weight_src srcs[3];
    const pl_weight_src *parts[3];
    for (int i = 0; i < n; i++) {
        int rc = fetch(m, get, ctx, layer, idx[i], &srcs[i], err, err_len);
        if (rc) return rc;
        parts[i] = &srcs[i];
    }
    int rc = m->ops->weight_create(m->bctx, parts, n, is_matrix, out, err, err_len);
    if (rc == PL_OK) m->weight_bytes += m->ops->weight_bytes(m->bctx, *out);
    return rc;
}

int pl_model_build(const pl_model_config *cfg, const pl_model_options *opts, pl_tensor_get_fn get, void *get_ctx,
                   pl_model **out, char *err, size_t err_len) {
    if (!cfg || !get || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_build: NULL argument");
    int rc = pl_config_validate(cfg, err, err_len);
    if (rc) return rc;
    pl_model_options o = {PL_BF16, PL_DEVICE_CPU, 0, 0, 0};
    if (opts) o = *opts;
    if (o.act_dtype != PL_BF16 && o.act_dtype != PL_F32)
        return pl_fail(err, err_len, PL_ERR_INVALID, "opts.act_dtype: %d is neither PL_BF16 nor PL_F32", (int)o.act_dtype);
    if (o.device != PL_DEVICE_CPU && o.device != PL_DEVICE_CUDA)
        return pl_fail(err, err_len, PL_ERR_INVALID, "opts.device: %d is neither PL_DEVICE_CPU nor PL_DEVICE_CUDA",
                       (int)o.device);
    if (o.num_threads < 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "opts.num_threads: %d must be >= 0", o.num_threads);
    if (o.cuda_attn_splits != 0 && o.cuda_attn_splits != 1)
        return pl_fail(err, err_len, PL_ERR_INVALID, "opts.cuda_attn_splits: %d is neither 0 (from the contexts) nor 1 (from the shapes)",
                       o.cuda_attn_splits);
    if (o.num_threads == 0) o.num_threads = omp_get_num_procs();
    /* The bar is for checkpoints that take a while: over ~100M parameters. */
    double params = (double)cfg->vocab_size * cfg->hidden_size +
                    (double)cfg->num_layers * cfg->hidden_size *
                        (2.0 * (cfg->num_heads + cfg->num_kv_heads) * cfg->head_dim + 3.0 * cfg->intermediate_size);
    int show = o.progress && params > 1e8;
    pl_model *m = calloc(1, sizeof *m);
    if (!m) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_model_build: out of memory");
    m->cfg = *cfg;
    m->opts = o;
    m->ops = pl_cpu_backend_ops();
    m->cpu.act = o.act_dtype;
    m->cpu.threads = o.num_threads;
    m->bctx = &m->cpu;
    if (o.device == PL_DEVICE_CUDA) {
        pl_cuda_backend *cb = NULL;
        if ((rc = pl_cuda_backend_create(o.act_dtype, 0, &cb, err, err_len))) {
            free(m);
            return rc;
        }
        pl_cuda_backend_attn_split_rule(cb, o.cuda_attn_splits);
        m->ops = pl_cuda_backend_ops();
        m->bctx = cb;
    }
    m->layers = calloc((size_t)cfg->num_layers, sizeof *m->layers);
    if (!m->layers) {
        pl_model_free(m);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_model_build: out of memory");
    }
    static const int i_qkv[] = {PL_T_Q, PL_T_K, PL_T_V}, i_gu[] = {PL_T_GATE, PL_T_UP};
    static const int i_o[] = {PL_T_O}, i_down[] = {PL_T_DOWN}, i_in[] = {PL_T_IN_NORM}, i_post[] = {PL_T_POST_NORM};
    static const int i_qn[] = {PL_T_Q_NORM}, i_kn[] = {PL_T_K_NORM};
    static const int g_emb[] = {PL_T_EMBED}, g_norm[] = {PL_T_FINAL_NORM}, g_head[] = {PL_T_LM_HEAD};
    rc = make(m, get, get_ctx, -1, g_emb, 1, 1, &m->embed, err, err_len);
    if (!rc) rc = make(m, get, get_ctx, -1, g_norm, 1, 0, &m->final_norm, err, err_len);
    if (!rc) {
        if (cfg->tie_word_embeddings)
            m->lm_head = m->embed;
        else
            rc = make(m, get, get_ctx, -1, g_head, 1, 1, &m->lm_head, err, err_len);
    }
    /* A step reads one embedding row per token: count the table only as the tied head. */
    if (!rc && !cfg->tie_word_embeddings) m->weight_bytes -= m->ops->weight_bytes(m->bctx, m->embed);
    if (show && !rc) fprintf(stderr, "\rloading: embeddings done");
    for (int l = 0; l < cfg->num_layers && !rc; l++) {
        pl_layer_weights *w = &m->layers[l];
        if ((rc = make(m, get, get_ctx, l, i_in, 1, 0, &w->in_norm, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_post, 1, 0, &w->post_norm, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_qn, 1, 0, &w->q_norm, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_kn, 1, 0, &w->k_norm, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_qkv, 3, 1, &w->qkv, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_o, 1, 1, &w->o, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_gu, 2, 1, &w->gate_up, err, err_len)) ||
            (rc = make(m, get, get_ctx, l, i_down, 1, 1, &w->down, err, err_len)))
            break;
        if (show) {
            int done = (l + 1) * 40 / cfg->num_layers;
            fprintf(stderr, "\rloading: [%.*s%*s] layer %d/%d", done, "========================================",
                    40 - done, "", l + 1, cfg->num_layers);
        }
    }
    if (show) fprintf(stderr, "\n");
    if (rc) {
        pl_model_free(m);
        return rc;
    }
    *out = m;
    return PL_OK;
}

const pl_model_config *pl_model_get_config(const pl_model *m) { return m ? &m->cfg : NULL; }
const pl_model_options *pl_model_get_options(const pl_model *m) { return m ? &m->opts : NULL; }
size_t pl_model_weight_bytes(const pl_model *m) { return m ? m->weight_bytes : 0; }

int pl_model_finish(pl_model *m, char *err, size_t err_len) {
    if (!m) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_finish: model must not be NULL");
    return m->ops->finish ? m->ops->finish(m->bctx, err, err_len) : PL_OK;
}

int pl_model_tensor_row(const pl_model *m, int layer, int idx, int r, float *out, char *err, size_t err_len) {
    const pl_model_config *c = &m->cfg;
    int rows, cols;
    if (layer >= c->num_layers || (layer >= 0 && (idx < 0 || idx >= PL_T_LAYER_COUNT)) ||
        (layer < 0 && (idx < 0 || idx >= PL_T_GLOBAL_COUNT)))
        return pl_fail(err, err_len, PL_ERR_INVALID, "tensor (layer %d, idx %d) does not exist", layer, idx);
    pl_tensor_shape(c, layer, idx, &rows, &cols);
    if (r < 0 || r >= rows) return pl_fail(err, err_len, PL_ERR_INVALID, "row %d outside [0, %d)", r, rows);
    const void *w = NULL;
    int off = 0, qd = c->num_heads * c->head_dim, kd = c->num_kv_heads * c->head_dim;
    if (layer < 0) {
        w = idx == PL_T_EMBED ? m->embed : idx == PL_T_FINAL_NORM ? m->final_norm : m->lm_head;
    } else {
        const pl_layer_weights *lw = &m->layers[layer];
        switch (idx) {
        case PL_T_Q: w = lw->qkv; break;
        case PL_T_K: w = lw->qkv, off = qd; break;
        case PL_T_V: w = lw->qkv, off = qd + kd; break;
        case PL_T_O: w = lw->o; break;
        case PL_T_GATE: w = lw->gate_up; break;
        case PL_T_UP: w = lw->gate_up, off = c->intermediate_size; break;
        case PL_T_DOWN: w = lw->down; break;
        case PL_T_IN_NORM: w = lw->in_norm; break;
        case PL_T_POST_NORM: w = lw->post_norm; break;
        case PL_T_Q_NORM: w = lw->q_norm; break;
        default: w = lw->k_norm; break;
        }
    }
    return m->ops->weight_row(m->bctx, w, r + off, out, err, err_len);
}

int pl_model_create_pools(const pl_model *m, int page_size, pl_pool_mode mode, int capped_pages, pl_kv_pools *out,
                          char *err, size_t err_len) {
    if (!m || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_create_pools: model/out is NULL");
    pl_page_pool_config pc;
    memset(&pc, 0, sizeof pc);
    pc.dtype = m->opts.act_dtype;
    pc.num_kv_heads = m->cfg.num_kv_heads;
    pc.page_size = page_size;
    pc.head_dim = m->cfg.head_dim;
    pc.mode = mode;
    pc.capped_pages = capped_pages;
    pc.storage = m->opts.device == PL_DEVICE_CUDA ? pl_cuda_backend_kv_storage(m->bctx) : NULL;
    return pl_kv_pools_create(&pc, m->cfg.num_layers, out, err, err_len);
}
