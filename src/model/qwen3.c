/* The Qwen3 forward pass, written once over a backend's op table. Attention goes either
 * through the caller's pl_attend_ops or, by default, through the sequences' paged caches
 * and pl_paged_attention (one block table per call, built from layer 0). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

static int ensure_workspace(pl_model *m, size_t rows, char *err, size_t err_len) {
    if (rows <= m->ws_rows) return PL_OK;
    const pl_model_config *c = &m->cfg;
    size_t e = m->opts.act_dtype == PL_F32 ? 4 : 2;
    size_t qd = (size_t)c->num_heads * c->head_dim, kd = (size_t)c->num_kv_heads * c->head_dim;
    size_t want = rows < 16 ? 16 : rows;
    size_t widths[9] = {(size_t)c->hidden_size, (size_t)c->hidden_size, qd + 2 * kd, qd,
                        2 * (size_t)c->intermediate_size, (size_t)c->intermediate_size, (size_t)c->hidden_size, qd,
                        (size_t)c->head_dim * 4 / e};
    void **bufs[9] = {&m->h, &m->a, &m->qkv, &m->attn, &m->gu, &m->mlp, &m->tmp, &m->qbuf, (void **)&m->rope};
    void *fresh[9] = {0};
    for (int i = 0; i < 9; i++) {
        fresh[i] = m->ops->alloc(m->bctx, want * widths[i] * e);
        if (!fresh[i]) {
            for (int j = 0; j < i; j++) m->ops->free(m->bctx, fresh[j]);
            return pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory for a workspace of %zu rows", want);
        }
    }
    for (int i = 0; i < 9; i++) {
        if (*bufs[i]) m->ops->free(m->bctx, *bufs[i]);
        *bufs[i] = fresh[i];
    }
    m->ws_rows = want;
    return PL_OK;
}

/* Paged attention for one layer over runs of consecutive sequences with equal chunk length. */
static int paged_layer(pl_model *m, const pl_forward_batch *b, int layer, const int *row_start, int max_pages,
                       const int32_t *block_table, const int32_t *ctx_lens, char *err, size_t err_len) {
    const pl_model_config *c = &m->cfg;
    int qd = c->num_heads * c->head_dim, kd = c->num_kv_heads * c->head_dim;
    size_t stride = (size_t)qd + 2 * (size_t)kd, e = m->opts.act_dtype == PL_F32 ? 4 : 2;
    for (int i = 0; i < b->num_seqs; i++) {
        int n = b->chunk_lens[i];
        if (!n) continue;
        pl_kv_chunk ch = {m->opts.act_dtype, n, c->num_kv_heads, c->head_dim,
                          (const char *)m->qkv + ((size_t)row_start[i] * stride + (size_t)qd) * e,
                          (const char *)m->qkv + ((size_t)row_start[i] * stride + (size_t)qd + kd) * e, stride};
        int rc = m->ops->kv_append(m->bctx, &b->seqs[i]->layers[layer], &ch, err, err_len);
        if (rc) return rc;
    }
    /* block_table / ctx_lens hold the non-empty sequences only (k counts them), so empty
     * slots do not split a decode batch into several launches. */
    for (int i = 0, k = 0; i < b->num_seqs;) {
        int n = b->chunk_lens[i];
        if (!n) {
            i++;
            continue;
        }
        int j = i + 1, cnt = 1;
        for (; j < b->num_seqs && (b->chunk_lens[j] == 0 || b->chunk_lens[j] == n); j++) cnt += b->chunk_lens[j] != 0;
        pl_paged_attention_args a;
        memset(&a, 0, sizeof a);
        pl_page_pool *pool = b->seqs[i]->layers[layer].pool;
        a.dtype = m->opts.act_dtype;
        a.batch = cnt;
        a.num_heads = c->num_heads;
        a.num_kv_heads = c->num_kv_heads;
        a.query_len = n;
        a.head_dim = c->head_dim;
        pl_page_pool_stats st;
        pl_page_pool_get_stats(pool, &st);
        a.num_pages = st.capacity_pages; /* every id below it is storage; stable across steps (graphs) */
        a.page_size = pl_page_pool_get_config(pool)->page_size;
        a.max_pages = max_pages;
        a.scale = 1.0f / sqrtf((float)c->head_dim);
        a.causal = 1;
        a.query = (const char *)m->qbuf + (size_t)row_start[i] * qd * e;
        a.key_pages = pl_page_pool_keys(pool);
        a.value_pages = pl_page_pool_values(pool);
        a.block_table = block_table + (size_t)k * max_pages;
        a.context_lens = ctx_lens + k;
        a.out = (char *)m->attn + (size_t)row_start[i] * qd * e;
        a.schedule = PL_ATTN_AUTO;
        int rc = m->ops->paged_attention(m->bctx, &a, err, err_len);
        if (rc) return rc;
        k += cnt;
        i = j;
    }
    return PL_OK;
}

/* What a forward call returns: f32 logits in host memory, or sampled tokens (samplers and
 * tokens; tokens NULL: no LM head at all). */
typedef struct fwd_out {
    float *logits;
    pl_sampler *const *samplers;
    int32_t *tokens;
    int no_graph; /* set for the eager redo of a step whose graph did not match */
} fwd_out;

static int forward(pl_model *m, const pl_forward_batch *b, const fwd_out *out, char *err, size_t err_len);

/* The residual add and the next RMSNorm: m->h += x, m->a = rmsnorm(m->h) * w (fused when
 * the backend has it). */
static int add_norm(pl_model *m, const void *x, const void *w, int rows) {
    const pl_backend_ops *o = m->ops;
    const int hid = m->cfg.hidden_size;
    if (o->add_rmsnorm) return o->add_rmsnorm(m->bctx, m->h, x, w, rows, hid, m->cfg.rms_norm_eps, m->a);
    int rc = o->add(m->bctx, m->h, x, (size_t)rows * hid);
    return rc ? rc : o->rmsnorm(m->bctx, m->h, w, rows, hid, m->cfg.rms_norm_eps, m->a);
}

static int forward_threads(pl_model *m, const pl_forward_batch *b, const fwd_out *out, char *err, size_t err_len) {
    /* Attention and other OpenMP code called inside use the model's thread count; the
     * caller's setting comes back afterwards. */
    int saved = omp_get_max_threads();
    omp_set_num_threads(m->opts.num_threads);
    int rc = forward(m, b, out, err, err_len);
    if (rc == PL_GRAPH_RECAPTURE) { /* the step was undone: run it again, captured as a new graph */
        if (err && err_len) err[0] = 0;
        rc = forward(m, b, out, err, err_len);
    }
    if (rc == PL_GRAPH_RETRY || rc == PL_GRAPH_RECAPTURE) { /* the step was undone: run it again eagerly */
        fwd_out eager = *out;
        eager.no_graph = 1;
        if (err && err_len) err[0] = 0;
        rc = forward(m, b, &eager, err, err_len);
    }
    omp_set_num_threads(saved);
    return rc;
}

int pl_model_forward(pl_model *m, const pl_forward_batch *b, float *logits, char *err, size_t err_len) {
    if (!m || !b || !logits) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_forward: model/batch/logits is NULL");
    fwd_out out = {logits, NULL, NULL, 0};
    return forward_threads(m, b, &out, err, err_len);
}

int pl_model_forward_sample(pl_model *m, const pl_forward_batch *b, pl_sampler *const *samplers, int32_t *tokens,
                            char *err, size_t err_len) {
    if (!m || !b) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_forward_sample: model/batch is NULL");
    if (b->all_logits)
        return pl_fail(err, err_len, PL_ERR_INVALID, "batch.all_logits: must be 0 for pl_model_forward_sample");
    fwd_out out = {NULL, samplers, tokens, 0};
    return forward_threads(m, b, &out, err, err_len);
}

/* Every non-empty row samples greedily: the backend's greedy head may take the LM head. */
static int head_greedy(const pl_model *m, const pl_forward_batch *b, pl_sampler *const *samplers) {
    if (!m->ops->head_greedy) return 0;
    for (int i = 0; i < b->num_seqs; i++)
        if (b->chunk_lens[i] && !pl_sampler_greedy(samplers ? samplers[i] : NULL)) return 0;
    return 1;
}

/* LM head of the packed last rows (m->a, k rows) and sampling in backend memory: only the
 * token ids come back. Draws are undone if the backend fails. */
static int head_sample(pl_model *m, const pl_forward_batch *b, int k, const fwd_out *out, int greedy, int *graphed,
                       char *err, size_t err_len) {
    const pl_model_config *c = &m->cfg;
    const pl_backend_ops *o = m->ops;
    if (greedy) { /* no logits stored, no draws to undo */
        int rc = o->head_greedy(m->bctx, m->a, k, m->lm_head, err, err_len);
        if (rc != PL_ERR_UNSUPPORTED) {
            if (!rc && *graphed) {
                *graphed = 0;
                rc = o->graph_end(m->bctx, PL_OK);
            }
            int32_t *toks = rc ? NULL : malloc(sizeof *toks * (size_t)k);
            if (!rc && !toks) rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
            if (!rc) rc = o->head_greedy_tokens(m->bctx, k, toks, err, err_len);
            for (int i = 0, j = 0; !rc && i < b->num_seqs; i++) out->tokens[i] = b->chunk_lens[i] ? toks[j++] : -1;
            free(toks);
            return rc;
        }
    }
    if ((size_t)k > m->dev_logit_rows) {
        /* sized for every slot of the batch at once: a buffer that moves as a batch fills up
         * would invalidate the decode-step graphs captured so far */
        const int want = k > b->num_seqs ? k : b->num_seqs;
        float *d = o->alloc(m->bctx, sizeof(float) * (size_t)want * (size_t)c->vocab_size);
        if (!d) return pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory for %d rows of logits", want);
        if (m->dev_logits) o->free(m->bctx, m->dev_logits);
        m->dev_logits = d;
        m->dev_logit_rows = (size_t)want;
    }
    int rc = o->matmul(m->bctx, m->a, k, m->lm_head, m->dev_logits, 1, err, err_len);
    if (rc) return rc;
    if (*graphed) { /* the step's device work ends with the logits: launch it before sampling */
        *graphed = 0;
        if ((rc = o->graph_end(m->bctx, PL_OK))) return rc;
    }
    pl_sample_req *reqs = malloc(sizeof *reqs * (size_t)k);
    int32_t *toks = malloc(sizeof *toks * (size_t)k);
    pl_mt19937 *saved = malloc(sizeof *saved * (size_t)b->num_seqs);
    if (!reqs || !toks || !saved) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
        goto done;
    }
    for (int i = 0, j = 0; i < b->num_seqs; i++) {
        if (!b->chunk_lens[i]) continue;
        pl_sampler *s = out->samplers ? out->samplers[i] : NULL;
        if (s) pl_sampler_get_rng(s, &saved[i]);
        pl_sampler_next(s, &reqs[j++]);
    }
    rc = o->sample(m->bctx, m->dev_logits, k, c->vocab_size, reqs, toks, err, err_len);
    for (int i = 0, j = 0; i < b->num_seqs; i++) {
        if (!b->chunk_lens[i]) {
            out->tokens[i] = -1;
            continue;
        }
        pl_sampler *s = out->samplers ? out->samplers[i] : NULL;
        if (rc && s) pl_sampler_set_rng(s, &saved[i]);
        if (!rc) out->tokens[i] = toks[j];
        j++;
    }
done:
    free(reqs);
    free(toks);
    free(saved);
    return rc;
}

static int forward(pl_model *m, const pl_forward_batch *b, const fwd_out *out, char *err, size_t err_len) {
    float *logits = out->logits;
    const pl_model_config *c = &m->cfg;
    const pl_backend_ops *o = m->ops;
    void *bx = m->bctx;
    if (b->num_seqs <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "batch.num_seqs: %d must be > 0", b->num_seqs);
    if (!b->chunk_lens || !b->positions || !b->tokens)
        return pl_fail(err, err_len, PL_ERR_INVALID, "batch: tokens/chunk_lens/positions is NULL");
    int paged = b->attend == NULL;
    if (paged && !b->seqs) return pl_fail(err, err_len, PL_ERR_INVALID, "batch.seqs: NULL with the default attend");
    if (!paged && !b->attend->attend) return pl_fail(err, err_len, PL_ERR_INVALID, "batch.attend->attend is NULL");
    int rows = 0, nonempty = 0;
    for (int i = 0; i < b->num_seqs; i++) {
        int n = b->chunk_lens[i];
        if (n < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "batch.chunk_lens[%d]: %d must be >= 0", i, n);
        if (n == 0) continue;
        nonempty++;
        if (b->positions[i] < 0)
            return pl_fail(err, err_len, PL_ERR_INVALID, "batch.positions[%d]: %d must be >= 0", i, b->positions[i]);
        if (n > (1 << 24) - rows) return pl_fail(err, err_len, PL_ERR_INVALID, "batch: more than 2^24 rows");
        rows += n;
        if (paged) {
            const pl_kv_seq *s = b->seqs[i];
            if (!s) return pl_fail(err, err_len, PL_ERR_INVALID, "batch.seqs[%d]: NULL for a chunk of %d tokens", i, n);
            if (s->num_layers != c->num_layers)
                return pl_fail(err, err_len, PL_ERR_INVALID, "batch.seqs[%d]: %d layers, model has %d", i,
                               s->num_layers, c->num_layers);
            if (pl_kv_seq_offset(s) != b->positions[i])
                return pl_fail(err, err_len, PL_ERR_INVALID, "batch.positions[%d]: %d, but the sequence holds %d tokens",
                               i, b->positions[i], pl_kv_seq_offset(s));
            if (pl_page_pool_get_config(s->layers[0].pool)->dtype != m->opts.act_dtype)
                return pl_fail(err, err_len, PL_ERR_INVALID, "batch.seqs[%d]: page dtype differs from the activation dtype",
                               i);
            for (int j = 0; j < i; j++)
                if (b->chunk_lens[j] && b->seqs[j] == s)
                    return pl_fail(err, err_len, PL_ERR_INVALID, "batch.seqs[%d]: same sequence as seqs[%d]", i, j);
        }
    }
    if (rows == 0) return PL_OK;
    for (int i = 0; i < rows; i++)
        if (b->tokens[i] < 0 || b->tokens[i] >= c->vocab_size)
            return pl_fail(err, err_len, PL_ERR_INVALID, "batch.tokens[%d]: id %d outside [0, %d)", i, b->tokens[i],
                           c->vocab_size);
    int rc = ensure_workspace(m, (size_t)rows, err, err_len);
    if (rc) return rc;

    int *row_start = malloc(sizeof(int) * (size_t)b->num_seqs);
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)rows);
    int32_t *block_table = NULL, *ctx_lens = NULL;
    const pl_seq_cache **l0 = NULL;
    int *pending = NULL, max_pages = 0, appended_layers = 0, graphed = 0;
    /* A decode step that returns sampled tokens may run as a CUDA graph (backend permitting):
     * its launches depend on the row count and the block-table width only. */
    const int graphable = paged && out->tokens && !logits && !out->no_graph && rows == nonempty && o->graph_begin;
    /* sampled tokens, every row greedy: the backend's greedy head takes the LM head */
    const int greedy = out->tokens && !logits && head_greedy(m, b, out->samplers);
    if (!row_start || !pos) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
        goto done;
    }
    for (int i = 0, r = 0; i < b->num_seqs; i++) {
        row_start[i] = r;
        for (int t = 0; t < b->chunk_lens[i]; t++) pos[r++] = b->positions[i] + t;
    }
    if (paged) {
        /* Reserve every sequence's new tokens up front; undone if a later one fails. */
        int i, k;
        for (i = 0; i < b->num_seqs; i++) {
            if (!b->chunk_lens[i]) continue;
            if ((rc = pl_kv_seq_reserve(b->seqs[i], b->chunk_lens[i], err, err_len))) break;
        }
        if (rc) goto done; /* reserved pages stay with their sequences, as a caller reservation would */
        l0 = malloc(sizeof *l0 * (size_t)b->num_seqs);
        pending = malloc(sizeof(int) * (size_t)b->num_seqs);
        if (!l0 || !pending) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
            goto done;
        }
        for (i = 0; i < b->num_seqs; i++) {
            l0[i] = b->chunk_lens[i] ? &b->seqs[i]->layers[0] : NULL;
            pending[i] = b->chunk_lens[i];
        }
        max_pages = pl_kv_max_pages(l0, b->num_seqs);
        if (max_pages < 1) max_pages = 1;
        if (graphable) max_pages = (max_pages + 7) / 8 * 8; /* fewer graph shapes */
        block_table = malloc(sizeof(int32_t) * (size_t)b->num_seqs * (size_t)max_pages);
        ctx_lens = malloc(sizeof(int32_t) * (size_t)b->num_seqs);
        if (!block_table || !ctx_lens) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
            goto done;
        }
        if ((rc = pl_kv_build_batch(l0, b->num_seqs, pending, max_pages, block_table, ctx_lens, err, err_len)))
            goto done;
        for (i = 0, k = 0; i < b->num_seqs; i++) /* compact: non-empty sequences only */
            if (b->chunk_lens[i]) {
                memmove(block_table + (size_t)k * max_pages, block_table + (size_t)i * max_pages,
                        sizeof(int32_t) * (size_t)max_pages);
                ctx_lens[k++] = ctx_lens[i];
            }
    }
    if (graphable) {
        /* the greedy head launches other kernels than the LM head and sampling */
        uint64_t key = ((uint64_t)rows << 32) ^ ((uint64_t)max_pages << 8) ^ (uint64_t)b->num_seqs ^ ((uint64_t)greedy << 63);
        graphed = o->graph_begin(bx, key) == PL_OK;
    }

    /* every row is a sequence's last (decode) and only those rows go on: the last layer's residual
     * add and the final norm as one op (a backend's add + RMSNorm, which adds the down projection's
     * K-split partials itself: two kernels fewer on the GPU), leaving m->a as the rows' norm */
    const int final_fused = !b->all_logits && (logits || out->tokens) && rows == nonempty;
    int hid = c->hidden_size, qd = c->num_heads * c->head_dim, kd = c->num_kv_heads * c->head_dim;
    size_t stride = (size_t)qd + 2 * (size_t)kd, e = m->opts.act_dtype == PL_F32 ? 4 : 2;
    float eps = c->rms_norm_eps;
    if ((rc = o->embed(bx, m->embed, b->tokens, rows, m->h, err, err_len)) ||
        (rc = o->rope_table(bx, pos, rows, c->head_dim, c->rope_theta, m->rope)))
        goto done;
    if ((rc = o->rmsnorm(bx, m->h, m->layers[0].in_norm, rows, hid, eps, m->a))) goto done;
    for (int l = 0; l < c->num_layers; l++) {
        const pl_layer_weights *w = &m->layers[l];
        /* m->a holds rmsnorm(h) with this layer's input norm */
        if ((rc = o->matmul(bx, m->a, rows, w->qkv, m->qkv, 0, err, err_len)) ||
            (rc = o->qk_norm_rope(bx, m->qkv, rows, stride, c->num_heads, c->num_kv_heads, c->head_dim, w->q_norm,
                                  w->k_norm, eps, m->rope, paged ? m->qbuf : NULL))) /* paged: q straight to its buffer */
            goto done;
        if (paged) {
            rc = paged_layer(m, b, l, row_start, max_pages, block_table, ctx_lens, err, err_len);
            appended_layers = l + 1;
            if (rc) goto done;
        } else {
            pl_attend_call call = {l, b->num_seqs, b->chunk_lens, row_start, b->positions, m->opts.act_dtype,
                                   c->num_heads, c->num_kv_heads, c->head_dim, 1.0f / sqrtf((float)c->head_dim),
                                   m->qkv, (const char *)m->qkv + (size_t)qd * e,
                                   (const char *)m->qkv + (size_t)(qd + kd) * e, stride, m->attn};
            if ((rc = b->attend->attend(b->attend->ctx, &call, err, err_len))) goto done;
        }
        if ((rc = o->matmul(bx, m->attn, rows, w->o, m->tmp, 0, err, err_len)) ||
            (rc = add_norm(m, m->tmp, w->post_norm, rows)) ||
            (rc = o->matmul(bx, m->a, rows, w->gate_up, m->gu, 0, err, err_len)) ||
            (rc = o->swiglu(bx, m->gu, rows, c->intermediate_size, m->mlp)) ||
            (rc = o->matmul(bx, m->mlp, rows, w->down, m->tmp, 0, err, err_len)))
            goto done;
        if (l + 1 < c->num_layers) rc = add_norm(m, m->tmp, m->layers[l + 1].in_norm, rows);
        else if (final_fused) rc = add_norm(m, m->tmp, m->final_norm, rows);
        else rc = o->add(bx, m->h, m->tmp, (size_t)rows * hid);
        if (!rc && graphed && o->graph_cut) rc = o->graph_cut(bx);
        if (rc) goto done;
    }
    if (b->all_logits) {
        if ((rc = o->rmsnorm(bx, m->h, m->final_norm, rows, hid, eps, m->a)) ||
            (rc = o->matmul(bx, m->a, rows, m->lm_head, logits, 1, err, err_len)))
            goto done;
    } else if (logits || out->tokens) {
        /* Last row of each non-empty sequence, packed, then scattered to its slot. */
        int k = 0;
        const void *last = m->h; /* already packed when every chunk is one row (decode) */
        if (rows != nonempty) {
            for (int i = 0; i < b->num_seqs; i++) {
                if (!b->chunk_lens[i]) continue;
                o->copy_rows(bx, (char *)m->tmp + (size_t)k * hid * e, (size_t)hid,
                             (const char *)m->h + (size_t)(row_start[i] + b->chunk_lens[i] - 1) * hid * e, (size_t)hid,
                             1, hid);
                k++;
            }
            last = m->tmp;
        }
        if (!logits) {
            if (final_fused || (rc = o->rmsnorm(bx, last, m->final_norm, nonempty, hid, eps, m->a)) == PL_OK)
                rc = head_sample(m, b, nonempty, out, greedy, &graphed, err, err_len);
            goto done;
        }
        if ((size_t)nonempty > m->logit_rows) {
            float *lb = malloc(sizeof(float) * (size_t)nonempty * (size_t)c->vocab_size);
            if (!lb) {
                rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory for logits");
                goto done;
            }
            free(m->logit_buf);
            m->logit_buf = lb;
            m->logit_rows = (size_t)nonempty;
        }
        if ((!final_fused && (rc = o->rmsnorm(bx, last, m->final_norm, nonempty, hid, eps, m->a))) ||
            (rc = o->matmul(bx, m->a, nonempty, m->lm_head, m->logit_buf, 1, err, err_len)))
            goto done;
        k = 0;
        for (int i = 0; i < b->num_seqs; i++) {
            if (!b->chunk_lens[i]) continue;
            memcpy(logits + (size_t)i * c->vocab_size, m->logit_buf + (size_t)k * c->vocab_size,
                   sizeof(float) * (size_t)c->vocab_size);
            k++;
        }
    }
done:
    if (graphed) rc = o->graph_end(bx, rc); /* an error inside a bracketed step */
    const int undone = rc == PL_GRAPH_RETRY || rc == PL_GRAPH_RECAPTURE;
    if (undone && paged) appended_layers = c->num_layers;
    if (rc && !undone && o->last_error && err && err_len && !err[0])
        pl_fail(err, err_len, rc, "forward: %s", o->last_error(bx));
    if (rc && paged && appended_layers > 0) {
        /* All-or-nothing for the caches: drop what this call appended. */
        for (int i = 0; i < b->num_seqs; i++) {
            if (!b->chunk_lens[i]) continue;
            for (int l = 0; l < appended_layers; l++) {
                pl_seq_cache *sc = &b->seqs[i]->layers[l];
                if (sc->offset == b->positions[i] + b->chunk_lens[i]) pl_seq_cache_rewind(sc, b->chunk_lens[i], NULL, 0);
            }
        }
    }
    free(row_start);
    free(pos);
    free(l0);
    free(pending);
    free(block_table);
    free(ctx_lens);
    return rc;
}
