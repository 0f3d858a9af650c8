/* Synthetic models: a named shape with random weights at sensible scales (linears and
 * embeddings N(0, 0.02), norm weights 1 + N(0, 0.05)), generated per element from a hash of
 * (seed, tensor, index) so the values do not depend on thread count or order. Values are
 * rounded to bf16 so a saved checkpoint holds exactly the model's weights. */
#include <math.h>
#include <string.h>

#include "base/bf16.h"
#include "model/model_internal.h"

static inline uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void gen_row(const pl_weight_src *s, int r, float *out) {
    uint64_t base = splitmix64(s->key) + (uint64_t)r * (uint64_t)s->cols;
    for (int i = 0; i < s->cols; i++) {
        uint64_t h = splitmix64(base + (uint64_t)i);
        /* Irwin-Hall of four 16-bit uniforms: mean 2, variance 1/3. */
        float u = (float)(h & 0xffff) + (float)((h >> 16) & 0xffff) + (float)((h >> 32) & 0xffff) +
                  (float)(h >> 48);
        float z = (u * (1.0f / 65536.0f) - 2.0f) * 1.7320508f;
        out[i] = pl_bf16_round(s->offset + s->scale * z);
    }
}

typedef struct synth_ctx {
    const pl_model_config *cfg;
    uint64_t seed;
} synth_ctx;

static int synth_get(void *ctx, int layer, int idx, pl_weight_src *src, char *err, size_t err_len) {
    (void)err;
    (void)err_len;
    synth_ctx *s = ctx;
    memset(src, 0, sizeof *src);
    int is_vec = pl_tensor_shape(s->cfg, layer, idx, &src->rows, &src->cols);
    src->gen = gen_row;
    src->key = splitmix64(s->seed) ^ ((uint64_t)(layer + 1) * 1000003ull + (uint64_t)idx * 7919ull);
    src->scale = is_vec ? 0.05f : 0.02f;
    src->offset = is_vec ? 1.0f : 0.0f;
    return PL_OK;
}

int pl_model_create_synthetic(const char *shape, uint64_t seed, const pl_model_options *opts, pl_model **out,
                              char *err, size_t err_len) {
    pl_model_config cfg;
    int rc = pl_model_shape_config(shape, &cfg, err, err_len);
    if (rc) return rc;
    synth_ctx s = {&cfg, seed};
    return pl_model_build(&cfg, opts, synth_get, &s, out, err, err_len);
}
