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
    for (int i = 0; i < b->num_seqs;) {
        int n = b->chunk_lens[i];
        if (!n) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < b->num_seqs && b->chunk_lens[j] == n) j++;
        pl_paged_attention_args a;
        memset(&a, 0, sizeof a);
        pl_page_pool *pool = b->seqs[i]->layers[layer].pool;
        a.dtype = m->opts.act_dtype;
        a.batch = j - i;
        a.num_heads = c->num_heads;
        a.num_kv_heads = c->num_kv_heads;
        a.query_len = n;
        a.head_dim = c->head_dim;
        pl_page_pool_stats st;
        pl_page_pool_get_stats(pool, &st);
        a.num_pages = st.num_pages;
        a.page_size = pl_page_pool_get_config(pool)->page_size;
        a.max_pages = max_pages;
        a.scale = 1.0f / sqrtf((float)c->head_dim);
        a.causal = 1;
        a.query = (const char *)m->qbuf + (size_t)row_start[i] * qd * e;
        a.key_pages = pl_page_pool_keys(pool);
        a.value_pages = pl_page_pool_values(pool);
        a.block_table = block_table + (size_t)i * max_pages;
        a.context_lens = ctx_lens + i;
        a.out = (char *)m->attn + (size_t)row_start[i] * qd * e;
        a.schedule = PL_ATTN_AUTO;
        int rc = m->ops->paged_attention(m->bctx, &a, err, err_len);
        if (rc) return rc;
        i = j;
    }
    return PL_OK;
}

static int forward(pl_model *m, const pl_forward_batch *b, float *logits, char *err, size_t err_len);

int pl_model_forward(pl_model *m, const pl_forward_batch *b, float *logits, char *err, size_t err_len) {
    if (!m) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_forward: model is NULL");
    /* Attention and other OpenMP code called inside use the model's thread count; the
     * caller's setting comes back afterwards. */
    int saved = omp_get_max_threads();
    omp_set_num_threads(m->opts.num_threads);
    int rc = forward(m, b, logits, err, err_len);
    omp_set_num_threads(saved);
    return rc;
}

static int forward(pl_model *m, const pl_forward_batch *b, float *logits, char *err, size_t err_len) {
    if (!m || !b || !logits) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_forward: model/batch/logits is NULL");
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
    int *pending = NULL, max_pages = 0, appended_layers = 0;
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
        int i;
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
        block_table = malloc(sizeof(int32_t) * (size_t)b->num_seqs * (size_t)max_pages);
        ctx_lens = malloc(sizeof(int32_t) * (size_t)b->num_seqs);
        if (!block_table || !ctx_lens) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "forward: out of memory");
            goto done;
        }
        if ((rc = pl_kv_build_batch(l0, b->num_seqs, pending, max_pages, block_table, ctx_lens, err, err_len)))
            goto done;
    }

    int hid = c->hidden_size, qd = c->num_heads * c->head_dim, kd = c->num_kv_heads * c->head_dim;
    size_t stride = (size_t)qd + 2 * (size_t)kd, e = m->opts.act_dtype == PL_F32 ? 4 : 2;
    float eps = c->rms_norm_eps;
    if ((rc = o->embed(bx, m->embed, b->tokens, rows, m->h, err, err_len)) ||
        (rc = o->rope_table(bx, pos, rows, c->head_dim, c->rope_theta, m->rope)))
        goto done;
    for (int l = 0; l < c->num_layers; l++) {
        const pl_layer_weights *w = &m->layers[l];
        if ((rc = o->rmsnorm(bx, m->h, w->in_norm, rows, hid, eps, m->a)) ||
            (rc = o->matmul(bx, m->a, rows, w->qkv, m->qkv, 0, err, err_len)) ||
            (rc = o->qk_norm_rope(bx, m->qkv, rows, stride, c->num_heads, c->num_kv_heads, c->head_dim, w->q_norm,
                                  w->k_norm, eps, m->rope)))
            goto done;
        if (paged) {
            if ((rc = o->copy_rows(bx, m->qbuf, (size_t)qd, m->qkv, stride, rows, qd))) goto done;
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
            (rc = o->add(bx, m->h, m->tmp, (size_t)rows * hid)) ||
            (rc = o->rmsnorm(bx, m->h, w->post_norm, rows, hid, eps, m->a)) ||
            (rc = o->matmul(bx, m->a, rows, w->gate_up, m->gu, 0, err, err_len)) ||
            (rc = o->swiglu(bx, m->gu, rows, c->intermediate_size, m->mlp)) ||
            (rc = o->matmul(bx, m->mlp, rows, w->down, m->tmp, 0, err, err_len)) ||
            (rc = o->add(bx, m->h, m->tmp, (size_t)rows * hid)))
            goto done;
    }
    if (b->all_logits) {
        if ((rc = o->rmsnorm(bx, m->h, m->final_norm, rows, hid, eps, m->a)) ||
            (rc = o->matmul(bx, m->a, rows, m->lm_head, logits, 1, err, err_len)))
            goto done;
    } else {
        /* Last row of each non-empty sequence, packed, then scattered to its slot. */
        int k = 0;
        for (int i = 0; i < b->num_seqs; i++) {
            if (!b->chunk_lens[i]) continue;
            o->copy_rows(bx, (char *)m->tmp + (size_t)k * hid * e, (size_t)hid,
                         (const char *)m->h + (size_t)(row_start[i] + b->chunk_lens[i] - 1) * hid * e, (size_t)hid, 1,
                         hid);
            k++;
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
        if ((rc = o->rmsnorm(bx, m->tmp, m->final_norm, nonempty, hid, eps, m->a)) ||
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
    if (rc && o->last_error && err && err_len && !err[0]) pl_fail(err, err_len, rc, "forward: %s", o->last_error(bx));
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
