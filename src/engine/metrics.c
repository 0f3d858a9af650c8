/* Serving metrics of spec 5.1: timing samples and cache-state snapshots taken after every
 * prefill chunk and every decode call, over live requests (decode slots + pending prefill). */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

static int push(double **v, int *n, int *cap, double x) {
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 256;
        double *p = realloc(*v, sizeof(double) * (size_t)c);
        if (!p) return PL_ERR_NOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return PL_OK;
}

/* The per-step arrays stay the same length: the context, row and slot arrays grow first (their
 * capacity counts only once all three have), and a failed growth records nothing. */
int pl_eng_metrics_push_step(pl_engine *e, double s, const int32_t *slot_contexts) {
    const int n = e->m.num_step_samples, B = e->cfg.batch_size;
    if (n == e->step_ctx_cap) {
        int c = e->step_ctx_cap ? 2 * e->step_ctx_cap : 256;
        int64_t *p = realloc(e->m.step_context_tokens, sizeof(int64_t) * (size_t)c);
        if (!p) return PL_ERR_NOMEM;
        e->m.step_context_tokens = p;
        int *q = realloc(e->m.step_rows, sizeof(int) * (size_t)c);
        if (!q) return PL_ERR_NOMEM;
        e->m.step_rows = q;
        int32_t *w = realloc(e->m.step_slot_contexts, sizeof(int32_t) * (size_t)c * (size_t)B);
        if (!w) return PL_ERR_NOMEM;
        e->m.step_slot_contexts = w;
        int *a = realloc(e->m.step_after_prefill, sizeof(int) * (size_t)c);
        if (!a) return PL_ERR_NOMEM;
        e->m.step_after_prefill = a;
        e->step_ctx_cap = c;
    }
    int rc = push(&e->m.step_samples, &e->m.num_step_samples, &e->steps_cap, s);
    if (rc == PL_OK) {
        int64_t tokens = 0;
        int rows = 0;
        for (int b = 0; b < B; b++) {
            e->m.step_slot_contexts[(size_t)n * B + b] = slot_contexts[b];
            tokens += slot_contexts[b];
            rows += slot_contexts[b] > 0;
        }
        e->m.step_context_tokens[n] = tokens;
        e->m.step_rows[n] = rows;
        e->m.step_after_prefill[n] = e->iter_prefilled;
    }
    return rc;
}

int pl_eng_metrics_push_gap(pl_engine *e, double s) {
    return push(&e->m.gap_samples, &e->m.num_gap_samples, &e->gaps_cap, s);
}

void pl_eng_metrics_clear(pl_engine *e) {
    double *steps = e->m.step_samples, *gaps = e->m.gap_samples;
    int64_t *ctx = e->m.step_context_tokens;
    int *rows = e->m.step_rows;
    int32_t *slot_ctx = e->m.step_slot_contexts;
    int *after = e->m.step_after_prefill;
    memset(&e->m, 0, sizeof e->m);
    e->m.step_samples = steps;
    e->m.gap_samples = gaps;
    e->m.step_context_tokens = ctx;
    e->m.step_rows = rows;
    e->m.step_slot_contexts = slot_ctx;
    e->m.step_after_prefill = after;
    e->gap_chain = 0;
}

static void snapshot_req(pl_engine *e, const pl_req *r, size_t *dense, int64_t *live_pages, int64_t *tail,
                         int64_t *tail_live) {
    *dense += pl_eng_dense_req_bytes(e, r);
    if (!r->has_kv) return;
    for (int l = 0; l < r->kv.num_layers; l++) {
        const pl_seq_cache *c = &r->kv.layers[l];
        *live_pages += c->num_pages;
        if (c->num_pages > 0) {
            *tail += e->cfg.page_size - c->page_lens[c->num_pages - 1];
            *tail_live += (int64_t)c->num_pages * e->cfg.page_size;
        }
    }
}

void pl_eng_snapshot(pl_engine *e) {
    int live = 0;
    size_t dense = pl_eng_stage_bytes(e);
    int64_t live_pages = 0, tail = 0, tail_live = 0;
    if (e->pending) {
        live++;
        snapshot_req(e, e->pending, &dense, &live_pages, &tail, &tail_live);
    }
    for (int s = 0; s < e->cfg.batch_size; s++)
        if (e->slots[s]) {
            live++;
            snapshot_req(e, e->slots[s], &dense, &live_pages, &tail, &tail_live);
        }
    size_t paged = 0;
    int64_t capacity = 0;
    if (e->has_pools) {
        pl_page_pool_stats st;
        pl_kv_pools_get_stats(&e->pools, &st);
        paged = st.storage_bytes;
        capacity = st.capacity_pages;
    }
    pl_engine_metrics *m = &e->m;
    if (live > m->peak_active_requests) m->peak_active_requests = live;
    if (dense > m->peak_dense_bytes) m->peak_dense_bytes = dense;
    if (paged > m->peak_paged_bytes) m->peak_paged_bytes = paged;
    size_t kv = dense > paged ? dense : paged;
    if (kv > m->peak_kv_bytes) m->peak_kv_bytes = kv;
    if (live_pages > m->peak_live_pages) m->peak_live_pages = live_pages;
    if (capacity > m->peak_capacity_pages) m->peak_capacity_pages = capacity;
    if (tail > m->tail_waste_slots) {
        m->tail_waste_slots = tail;
        m->tail_live_slots = tail_live;
        m->tail_waste_bytes = (double)tail * (double)e->token_bytes;
    }
}

void pl_engine_get_metrics(const pl_engine *e, pl_engine_metrics *out) {
    *out = e->m;
    if (e->has_pools) {
        pl_page_pool_stats st;
        pl_kv_pools_get_stats(&e->pools, &st);
        out->reused_page_allocations = st.reused_allocations;
        out->storage_growths = st.growths;
        out->copied_pages_on_growth = st.copied_pages;
        out->paged_growth_copy_bytes = st.copied_bytes;
    }
}
