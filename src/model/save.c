/* pl_model_save: a Hugging Face directory with config.json, generation_config.json and one
 * bf16 model.safetensors (tensor names as transformers writes them; no lm_head when tied). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bf16.h"
#include "model/model_internal.h"

typedef struct save_entry {
    int layer, idx, rows, cols, is_vec;
    uint64_t begin, end;
} save_entry;

/* mkdir -p */
static int make_dirs(const char *dir) {
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int pl_model_save(const pl_model *m, const char *dir, char *err, size_t err_len) {
    if (!m || !dir) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_save: model/dir is NULL");
    if (make_dirs(dir) != 0)
        return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot create directory: %s", dir, strerror(errno));
    const pl_model_config *c = &m->cfg;
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = pl_config_write(c, path, err, err_len);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot open for writing", path);
    fprintf(f, "{\n  \"eos_token_id\": [");
    for (int i = 0; i < c->num_eos; i++) fprintf(f, "%s%d", i ? ", " : "", c->eos_ids[i]);
    fprintf(f, "]\n}\n");
    if (fclose(f) != 0) return pl_fail(err, err_len, PL_ERR_IO, "%s: write failed", path);

    int n = 0, cap = PL_T_GLOBAL_COUNT + c->num_layers * PL_T_LAYER_COUNT;
    save_entry *es = calloc((size_t)cap, sizeof *es);
    if (!es) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_model_save: out of memory");
    uint64_t off = 0;
    for (int layer = -1; layer < c->num_layers; layer++) {
        int count = layer < 0 ? PL_T_GLOBAL_COUNT : PL_T_LAYER_COUNT;
        for (int idx = 0; idx < count; idx++) {
            if (layer < 0 && idx == PL_T_LM_HEAD && c->tie_word_embeddings) continue;
            save_entry *e = &es[n++];
            e->layer = layer, e->idx = idx;
            e->is_vec = pl_tensor_shape(c, layer, idx, &e->rows, &e->cols);
            e->begin = off;
            off += (uint64_t)e->rows * (uint64_t)e->cols * 2;
            e->end = off;
        }
    }
    /* Header JSON, padded with spaces to a multiple of 8 as the reference writer does. */
    size_t hcap = (size_t)n * 200 + 64, hl = 0;
    char *h = malloc(hcap);
    float *row = malloc(sizeof(float) * (size_t)(c->hidden_size > c->intermediate_size ? c->hidden_size : c->intermediate_size) * 4 + 4096);
    uint16_t *brow = malloc(sizeof(uint16_t) * (size_t)(c->hidden_size > c->intermediate_size ? c->hidden_size : c->intermediate_size) * 4 + 8192);
    if (!h || !row || !brow) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "pl_model_save: out of memory");
        goto done;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < n; i++) {
        char name[160];
        pl_tensor_name(es[i].layer, es[i].idx, name, sizeof name);
        if (es[i].is_vec)
            hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"BF16\",\"shape\":[%d],\"data_offsets\":[%llu,%llu]}",
                                   name, es[i].cols, (unsigned long long)es[i].begin, (unsigned long long)es[i].end);
        else
            hl += (size_t)snprintf(h + hl, hcap - hl,
                                   ",\"%s\":{\"dtype\":\"BF16\",\"shape\":[%d,%d],\"data_offsets\":[%llu,%llu]}", name,
                                   es[i].rows, es[i].cols, (unsigned long long)es[i].begin,
                                   (unsigned long long)es[i].end);
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8) h[hl++] = ' ';
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    if (!f) {
        rc = pl_fail(err, err_len, PL_ERR_IO, "%s: cannot open for writing", path);
        goto done;
    }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    int ok = fwrite(len8, 1, 8, f) == 8 && fwrite(h, 1, hl, f) == hl;
    for (int i = 0; i < n && ok && !rc; i++) {
        for (int r = 0; r < es[i].rows && ok; r++) {
            if ((rc = pl_model_tensor_row(m, es[i].layer, es[i].idx, r, row, err, err_len))) break;
            for (int k = 0; k < es[i].cols; k++) brow[k] = pl_f32_to_bf16(row[k]);
            ok = fwrite(brow, 2, (size_t)es[i].cols, f) == (size_t)es[i].cols;
        }
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok && !rc) rc = pl_fail(err, err_len, PL_ERR_IO, "%s: write failed", path);
done:
    free(h);
    free(row);
    free(brow);
    free(es);
    return rc;
}
