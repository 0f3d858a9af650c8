/* pl_model_load: a Hugging Face Qwen3 directory (config.json, generation_config.json when
 * present, safetensors weights) checked tensor by tensor, then handed to the backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_internal.h"

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return NULL;
    }
    long n = ftell(f);
    if (n < 0 || n > (16L << 20) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

int pl_model_read_config(const char *dir, pl_model_config *cfg, char *err, size_t err_len) {
    char path[4096];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *txt = slurp(path, &len);
    if (!txt) return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot read (is --model a Hugging Face directory?)", path);
    int rc = pl_config_parse(txt, len, path, cfg, err, err_len);
    free(txt);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/generation_config.json", dir);
    txt = slurp(path, &len);
    if (txt) {
        rc = pl_generation_config_parse(txt, len, path, cfg, err, err_len);
        free(txt);
    }
    return rc;
}

typedef struct load_ctx {
    const pl_st_set *set;
} load_ctx;

static int load_get(void *ctx, int layer, int idx, pl_weight_src *src, char *err, size_t err_len) {
    (void)err;
    (void)err_len;
    load_ctx *l = ctx;
    char name[160];
    pl_tensor_name(layer, idx, name, sizeof name);
    const pl_st_tensor *t = pl_st_find(l->set, name);
    memset(src, 0, sizeof *src);
    src->dtype = t->dtype;
    src->rows = t->ndim == 2 ? (int)t->shape[0] : 1;
    src->cols = (int)t->shape[t->ndim - 1];
    src->data = t->data;
    return PL_OK;
}

/* Every expected tensor present with its shape; nothing unexpected. */
static int check_tensors(const pl_model_config *c, const pl_st_set *set, const char *dir, char *err, size_t err_len) {
    char *used = calloc((size_t)set->num_tensors + 1, 1);
    if (!used) return pl_fail(err, err_len, PL_ERR_NOMEM, "load: out of memory");
    int rc = PL_OK;
    for (int layer = -1; layer < c->num_layers && !rc; layer++) {
        int count = layer < 0 ? PL_T_GLOBAL_COUNT : PL_T_LAYER_COUNT;
        for (int idx = 0; idx < count && !rc; idx++) {
            char name[160];
            pl_tensor_name(layer, idx, name, sizeof name);
            int rows, cols, is_vec = pl_tensor_shape(c, layer, idx, &rows, &cols);
            const pl_st_tensor *t = pl_st_find(set, name);
            int optional = layer < 0 && idx == PL_T_LM_HEAD && c->tie_word_embeddings;
            if (!t) {
                if (optional) continue;
                char want[48];
                if (is_vec)
                    snprintf(want, sizeof want, "[%d]", cols);
                else
                    snprintf(want, sizeof want, "[%d, %d]", rows, cols);
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: missing tensor %s (expected shape %s)",
                             set->num_files == 1 ? set->paths[0] : dir, name, want);
                break;
            }
            used[t - set->tensors] = 1;
            int ok = is_vec ? (t->ndim == 1 && t->shape[0] == cols)
                            : (t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols);
            if (!ok) {
                char found[96] = "[";
                for (int d = 0; d < t->ndim; d++) {
                    char x[24];
                    snprintf(x, sizeof x, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
                    strncat(found, x, sizeof found - strlen(found) - 2);
                }
                strcat(found, "]");
                if (is_vec)
                    rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: shape %s, expected [%d]",
                                 set->paths[t->file], name, found, cols);
                else
                    rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: tensor %s: shape %s, expected [%d, %d]",
                                 set->paths[t->file], name, found, rows, cols);
            }
        }
    }
    for (int i = 0; i < set->num_tensors && !rc; i++)
        if (!used[i])
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: unexpected tensor %s (not part of a %d-layer Qwen3 model)",
                         set->paths[set->tensors[i].file], set->tensors[i].name, c->num_layers);
    free(used);
    return rc;
}

int pl_model_load(const char *dir, const pl_model_options *opts, pl_model **out, char *err, size_t err_len) {
    if (!dir || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_load: dir/out is NULL");
    pl_model_config cfg;
    int rc = pl_model_read_config(dir, &cfg, err, err_len);
    if (rc) return rc;
    pl_st_set set;
    if ((rc = pl_st_open_dir(dir, &set, err, err_len))) return rc;
    if ((rc = check_tensors(&cfg, &set, dir, err, err_len)) == PL_OK) {
        load_ctx l = {&set};
        rc = pl_model_build(&cfg, opts, load_get, &l, out, err, err_len);
    }
    pl_st_close(&set);
    return rc;
}
