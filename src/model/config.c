/* Qwen3 configurations: the built-in synthetic shapes, config.json / generation_config.json
 * parsing (transformers 4.x and 5.x spellings) and writing. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"

typedef struct shape_row {
    const char *name;
    int vocab, hidden, layers, heads, kv_heads, inter, max_pos, tied;
} shape_row;

static const shape_row k_shapes[] = {
    {"qwen3-0.6b", 151936, 1024, 28, 16, 8, 3072, 40960, 1},
    {"qwen3-1.7b", 151936, 2048, 28, 16, 8, 6144, 40960, 1},
    {"qwen3-4b", 151936, 2560, 36, 32, 8, 9728, 65536, 1},
    {"qwen3-8b", 151936, 4096, 36, 32, 8, 12288, 40960, 0},
    {"tiny", 1024, 256, 2, 4, 2, 512, 40960, 1},
    {"tiny-untied", 1024, 256, 2, 4, 2, 512, 40960, 0},
    {"small", 151936, 512, 4, 8, 2, 1536, 40960, 1},
    {"serve", 151936, 128, 4, 4, 2, 384, 40960, 1}, /* bench-serving default: make run in about a minute */
};
#define NUM_SHAPES ((int)(sizeof k_shapes / sizeof k_shapes[0]))

static const char *const k_shape_names[] = {"qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b",
                                            "tiny",       "tiny-untied", "small",   "serve",   NULL};

const char *const *pl_model_shape_names(void) { return k_shape_names; }

int pl_model_shape_config(const char *shape, pl_model_config *cfg, char *err, size_t err_len) {
    if (!shape || !cfg) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_model_shape_config: shape/cfg is NULL");
    for (int i = 0; i < NUM_SHAPES; i++) {
        const shape_row *s = &k_shapes[i];
        if (strcmp(s->name, shape)) continue;
        memset(cfg, 0, sizeof *cfg);
        snprintf(cfg->architecture, sizeof cfg->architecture, "Qwen3ForCausalLM");
        cfg->vocab_size = s->vocab;
        cfg->hidden_size = s->hidden;
        cfg->num_layers = s->layers;
        cfg->num_heads = s->heads;
        cfg->num_kv_heads = s->kv_heads;
        cfg->head_dim = 128;
        cfg->intermediate_size = s->inter;
        cfg->max_position_embeddings = s->max_pos;
        cfg->rms_norm_eps = 1e-6f;
        cfg->rope_theta = 1e6;
        cfg->tie_word_embeddings = s->tied;
        cfg->num_eos = 1;
        cfg->eos_ids[0] = s->vocab > 151645 ? 151645 : s->vocab - 1;
        cfg->bos_id = -1;
        return PL_OK;
    }
    char names[256] = "";
    for (int i = 0; k_shape_names[i]; i++) {
        strncat(names, k_shape_names[i], sizeof names - strlen(names) - 1);
        if (k_shape_names[i + 1]) strncat(names, ", ", sizeof names - strlen(names) - 1);
    }
    return pl_fail(err, err_len, PL_ERR_INVALID, "shape: unknown '%s' (known: %s)", shape, names);
}

int pl_config_validate(const pl_model_config *c, char *err, size_t err_len) {
#define POS(f) \
    if (c->f <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "config: " #f " must be > 0, got %d", c->f)
    POS(vocab_size);
    POS(hidden_size);
    POS(num_layers);
    POS(num_heads);
    POS(num_kv_heads);
    POS(head_dim);
    POS(intermediate_size);
#undef POS
    if (c->vocab_size > (1 << 24) || c->hidden_size > 65536 || c->num_layers > 1024 || c->num_heads > 1024 ||
        c->head_dim > 1024 || c->intermediate_size > (1 << 20))
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "config: sizes out of range (vocab %d hidden %d layers %d heads %d head_dim %d inter %d)",
                       c->vocab_size, c->hidden_size, c->num_layers, c->num_heads, c->head_dim,
                       c->intermediate_size);
    if (c->num_heads % c->num_kv_heads)
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "config: num_attention_heads %d is not a multiple of num_key_value_heads %d", c->num_heads,
                       c->num_kv_heads);
    if (c->head_dim % 2 || c->hidden_size % 2 || c->intermediate_size % 2)
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "config: head_dim, hidden_size and intermediate_size must be even, got %d, %d, %d",
                       c->head_dim, c->hidden_size, c->intermediate_size);
    if (!(c->rms_norm_eps > 0) || !isfinite(c->rms_norm_eps))
        return pl_fail(err, err_len, PL_ERR_INVALID, "config: rms_norm_eps must be > 0, got %g", c->rms_norm_eps);
    if (!(c->rope_theta > 1) || !isfinite(c->rope_theta))
        return pl_fail(err, err_len, PL_ERR_INVALID, "config: rope_theta must be > 1, got %g", c->rope_theta);
    for (int i = 0; i < c->num_eos; i++)
        if (c->eos_ids[i] < 0 || c->eos_ids[i] >= c->vocab_size)
            return pl_fail(err, err_len, PL_ERR_INVALID, "config: eos_token_id %d outside [0, %d)", c->eos_ids[i],
                           c->vocab_size);
    return PL_OK;
}

static int get_int(const cJSON *root, const char *key, const char *file, int required, int dflt, int *out,
                   char *err, size_t err_len) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!it || cJSON_IsNull(it)) {
        if (required) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: missing \"%s\"", file, key);
        *out = dflt;
        return PL_OK;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || fabs(it->valuedouble) > 2147483647.0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"%s\" must be an integer", file, key);
    *out = (int)it->valuedouble;
    return PL_OK;
}

/* eos_token_id: an integer or a list of integers. */
static int get_eos(const cJSON *root, const char *file, pl_model_config *cfg, char *err, size_t err_len) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
    if (!it || cJSON_IsNull(it)) return PL_OK;
    int n = 0;
    int32_t ids[PL_MAX_EOS_IDS];
    if (cJSON_IsNumber(it)) {
        if (!(it->valuedouble >= 0 && it->valuedouble < 2147483647.0))
            return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"eos_token_id\" %g is not a token id", file,
                           it->valuedouble);
        ids[n++] = (int32_t)it->valuedouble;
    } else if (cJSON_IsArray(it)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, it) {
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble < 2147483647.0))
                return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"eos_token_id\" list holds a non-token-id", file);
            if (n == PL_MAX_EOS_IDS)
                return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"eos_token_id\" has more than %d ids", file,
                               PL_MAX_EOS_IDS);
            ids[n++] = (int32_t)e->valuedouble;
        }
    } else {
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"eos_token_id\" must be an integer or a list", file);
    }
    cfg->num_eos = n;
    memcpy(cfg->eos_ids, ids, sizeof(int32_t) * (size_t)n);
    return PL_OK;
}

/* rope_scaling (4.x) or rope_parameters (5.x): only the default rope type is supported. */
static int check_rope(const cJSON *obj, const char *key, const char *file, double *theta, char *err,
                      size_t err_len) {
    if (!obj || cJSON_IsNull(obj)) return PL_OK;
    if (!cJSON_IsObject(obj)) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"%s\" must be an object or null", file, key);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "rope_type");
    if (!t) t = cJSON_GetObjectItemCaseSensitive(obj, "type");
    if (t && !cJSON_IsNull(t)) {
        if (!cJSON_IsString(t))
            return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"%s.rope_type\" must be a string", file, key);
        if (strcmp(t->valuestring, "default"))
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                           "%s: unsupported rope type \"%s\" in \"%s\" (only \"default\" is supported)", file,
                           t->valuestring, key);
    }
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(obj, "rope_theta");
    if (th && !cJSON_IsNull(th)) {
        if (!cJSON_IsNumber(th))
            return pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"%s.rope_theta\" must be a number", file, key);
        *theta = th->valuedouble;
    }
    return PL_OK;
}

int pl_config_parse(const char *json, size_t len, const char *file, pl_model_config *out, char *err,
                    size_t err_len) {
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed JSON", file);
    int rc = PL_OK;
    pl_model_config c;
    memset(&c, 0, sizeof c);
    c.bos_id = -1;
    if (!cJSON_IsObject(root)) {
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: top level must be an object", file);
        goto done;
    }
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const char *a = NULL;
    if (cJSON_IsArray(arch) && cJSON_GetArraySize(arch) > 0 && cJSON_IsString(cJSON_GetArrayItem(arch, 0)))
        a = cJSON_GetArrayItem(arch, 0)->valuestring;
    if (a) {
        if (strcmp(a, "Qwen3ForCausalLM")) {
            rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                         "%s: unsupported architecture \"%s\" (expected \"Qwen3ForCausalLM\")", file, a);
            goto done;
        }
    } else if (!(cJSON_IsString(mt) && !strcmp(mt->valuestring, "qwen3"))) {
        rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                     "%s: no \"architectures\" [\"Qwen3ForCausalLM\"] and model_type is not \"qwen3\"", file);
        goto done;
    }
    if (cJSON_IsString(mt) && strcmp(mt->valuestring, "qwen3")) {
        rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: unsupported model_type \"%s\" (expected \"qwen3\")",
                     file, mt->valuestring);
        goto done;
    }
    snprintf(c.architecture, sizeof c.architecture, "Qwen3ForCausalLM");
    if ((rc = get_int(root, "vocab_size", file, 1, 0, &c.vocab_size, err, err_len)) ||
        (rc = get_int(root, "hidden_size", file, 1, 0, &c.hidden_size, err, err_len)) ||
        (rc = get_int(root, "num_hidden_layers", file, 1, 0, &c.num_layers, err, err_len)) ||
        (rc = get_int(root, "num_attention_heads", file, 1, 0, &c.num_heads, err, err_len)) ||
        (rc = get_int(root, "num_key_value_heads", file, 0, c.num_heads, &c.num_kv_heads, err, err_len)) ||
        (rc = get_int(root, "intermediate_size", file, 1, 0, &c.intermediate_size, err, err_len)) ||
        (rc = get_int(root, "max_position_embeddings", file, 0, 40960, &c.max_position_embeddings, err,
                      err_len)) ||
        (rc = get_int(root, "bos_token_id", file, 0, -1, &c.bos_id, err, err_len)))
        goto done;
    if (c.num_heads <= 0) {
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: num_attention_heads must be > 0, got %d", file, c.num_heads);
        goto done;
    }
    if ((rc = get_int(root, "head_dim", file, 0, c.hidden_size / c.num_heads, &c.head_dim, err, err_len))) goto done;
    const cJSON *eps = cJSON_GetObjectItemCaseSensitive(root, "rms_norm_eps");
    c.rms_norm_eps = 1e-6f;
    if (eps && !cJSON_IsNull(eps)) {
        if (!cJSON_IsNumber(eps)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"rms_norm_eps\" must be a number", file);
            goto done;
        }
        if (!(eps->valuedouble > 0 && eps->valuedouble < 1)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"rms_norm_eps\" %g outside (0, 1)", file, eps->valuedouble);
            goto done;
        }
        c.rms_norm_eps = (float)eps->valuedouble;
    }
    c.rope_theta = 1e6;
    const cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "rope_theta");
    if (th && !cJSON_IsNull(th)) {
        if (!cJSON_IsNumber(th)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: \"rope_theta\" must be a number", file);
            goto done;
        }
        c.rope_theta = th->valuedouble;
    }
    if ((rc = check_rope(cJSON_GetObjectItemCaseSensitive(root, "rope_scaling"), "rope_scaling", file,
                         &c.rope_theta, err, err_len)) ||
        (rc = check_rope(cJSON_GetObjectItemCaseSensitive(root, "rope_parameters"), "rope_parameters", file,
                         &c.rope_theta, err, err_len)))
        goto done;
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    c.tie_word_embeddings = cJSON_IsTrue(tie) ? 1 : 0;
    const cJSON *bias = cJSON_GetObjectItemCaseSensitive(root, "attention_bias");
    if (cJSON_IsTrue(bias)) {
        rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: \"attention_bias\": true is not supported", file);
        goto done;
    }
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (cJSON_IsString(act) && strcmp(act->valuestring, "silu")) {
        rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: unsupported hidden_act \"%s\" (expected \"silu\")", file,
                     act->valuestring);
        goto done;
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window");
    if (cJSON_IsTrue(sw)) {
        rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: \"use_sliding_window\": true is not supported", file);
        goto done;
    }
    if ((rc = get_eos(root, file, &c, err, err_len))) goto done;
    rc = pl_config_validate(&c, err, err_len);
    if (rc == PL_OK) *out = c;
done:
    cJSON_Delete(root);
    return rc;
}

int pl_generation_config_parse(const char *json, size_t len, const char *file, pl_model_config *cfg, char *err,
                               size_t err_len) {
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: malformed JSON", file);
    int rc = PL_OK;
    pl_model_config c = *cfg;
    if (!cJSON_IsObject(root)) {
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: top level must be an object", file);
    } else if ((rc = get_eos(root, file, &c, err, err_len)) == PL_OK &&
               (rc = get_int(root, "bos_token_id", file, 0, c.bos_id, &c.bos_id, err, err_len)) == PL_OK) {
        rc = pl_config_validate(&c, err, err_len);
        if (rc == PL_OK) *cfg = c;
    }
    cJSON_Delete(root);
    return rc;
}

int pl_config_write(const pl_model_config *c, const char *path, char *err, size_t err_len) {
    FILE *f = fopen(path, "w");
    if (!f) return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot open for writing", path);
    fprintf(f, "{\n  \"architectures\": [\"Qwen3ForCausalLM\"],\n  \"model_type\": \"qwen3\",\n");
    fprintf(f, "  \"attention_bias\": false,\n  \"hidden_act\": \"silu\",\n");
    fprintf(f, "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"num_hidden_layers\": %d,\n", c->vocab_size,
            c->hidden_size, c->num_layers);
    fprintf(f, "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n", c->num_heads,
            c->num_kv_heads, c->head_dim);
    fprintf(f, "  \"intermediate_size\": %d,\n  \"max_position_embeddings\": %d,\n", c->intermediate_size,
            c->max_position_embeddings);
    fprintf(f, "  \"rms_norm_eps\": %.9g,\n  \"rope_theta\": %.17g,\n  \"rope_scaling\": null,\n", c->rms_norm_eps,
            c->rope_theta);
    fprintf(f, "  \"tie_word_embeddings\": %s,\n  \"torch_dtype\": \"bfloat16\",\n",
            c->tie_word_embeddings ? "true" : "false");
    if (c->bos_id >= 0) fprintf(f, "  \"bos_token_id\": %d,\n", c->bos_id);
    fprintf(f, "  \"eos_token_id\": ");
    if (c->num_eos == 1) {
        fprintf(f, "%d", c->eos_ids[0]);
    } else {
        fprintf(f, "[");
        for (int i = 0; i < c->num_eos; i++) fprintf(f, "%s%d", i ? ", " : "", c->eos_ids[i]);
        fprintf(f, "]");
    }
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) return pl_fail(err, err_len, PL_ERR_IO, "%s: write failed", path);
    return PL_OK;
}
