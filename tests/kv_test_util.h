/* Helpers shared by the KV tests: random chunks and snapshots of pool + cache state. */
#ifndef PL_KV_TEST_UTIL_H
#define PL_KV_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bf16.h"
#include "base/rng.h"
#include "pagellm/kv.h"

/* Token-major [n, H, D] f32 values. */
static inline float *kvt_random_f32(pl_mt19937 *rng, int n, int H, int D) {
    float *x = malloc(sizeof(float) * (size_t)n * (size_t)H * (size_t)D);
    for (size_t i = 0; i < (size_t)n * (size_t)H * (size_t)D; i++) x[i] = (float)pl_mt_normal(rng);
    return x;
}

typedef struct kvt_snapshot {
    pl_page_pool_stats stats;
    int offset, num_pages;
    int32_t ids[256], lens[256];
} kvt_snapshot;

static inline void kvt_snap(const pl_seq_cache *c, kvt_snapshot *s) {
    memset(s, 0, sizeof *s);
    pl_page_pool_get_stats(c->pool, &s->stats);
    s->offset = c->offset;
    s->num_pages = c->num_pages;
    for (int i = 0; i < c->num_pages && i < 256; i++) {
        s->ids[i] = c->page_ids[i];
        s->lens[i] = c->page_lens[i];
    }
}

static inline int kvt_same(const kvt_snapshot *a, const kvt_snapshot *b) {
    return memcmp(a, b, sizeof *a) == 0;
}

#endif
