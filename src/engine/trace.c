/* The serving benchmark's request trace: a bit-exact port of the reference generator
 * (CPython random.Random), its canonical JSON (compact, sorted keys) and SHA-256, and
 * JSON files. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/sha256.h"
#include "pagellm/engine.h"

void pl_trace_free(pl_trace *t) {
    if (!t) return;
    for (int i = 0; i < t->num_requests; i++) free(t->requests[i].prompt);
    free(t->requests);
    t->requests = NULL;
    t->num_requests = 0;
}

int pl_trace_generate(const pl_trace_config *c, pl_trace *out, char *err, size_t err_len) {
    if (!c || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "trace: cfg and out must not be NULL");
    out->num_requests = 0;
    out->requests = NULL;
    if (c->num_seqs <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "num_seqs: must be positive, got %d", c->num_seqs);
    if (c->min_input_len <= 0 || c->max_input_len < c->min_input_len)
        return pl_fail(err, err_len, PL_ERR_INVALID, "input lengths: need 0 < min <= max, got %d..%d",
                       c->min_input_len, c->max_input_len);
    if (c->min_output_len <= 0 || c->max_output_len < c->min_output_len)
        return pl_fail(err, err_len, PL_ERR_INVALID, "output lengths: need 0 < min <= max, got %d..%d",
                       c->min_output_len, c->max_output_len);
    if (c->vocab_size < 258)
        return pl_fail(err, err_len, PL_ERR_INVALID, "vocab_size: must be at least 258, got %d", c->vocab_size);
    pl_trace t = {c->num_seqs, calloc((size_t)c->num_seqs, sizeof(pl_trace_request))};
    if (!t.requests) return pl_fail(err, err_len, PL_ERR_NOMEM, "trace: out of memory");
    pl_mt19937 rng;
    pl_mt_seed(&rng, c->seed);
    const int64_t low = 256, high = c->vocab_size - 1;
    for (int i = 0; i < c->num_seqs; i++) {
        pl_trace_request *r = &t.requests[i];
        r->request_id = i;
        r->prompt_len = (int)pl_mt_randint(&rng, c->min_input_len, c->max_input_len);
        r->max_new_tokens = (int)pl_mt_randint(&rng, c->min_output_len, c->max_output_len);
        r->prompt = malloc(sizeof(int32_t) * (size_t)r->prompt_len);
        if (!r->prompt) {
            pl_trace_free(&t);
            return pl_fail(err, err_len, PL_ERR_NOMEM, "trace: out of memory");
        }
        for (int j = 0; j < r->prompt_len; j++) {
            int64_t id = pl_mt_randint(&rng, low, high);
            if (id == c->eos_id) id = id == low ? low + 1 : id - 1; /* the reference's EOS avoidance */
            r->prompt[j] = (int32_t)id;
        }
    }
    *out = t;
    return PL_OK;
}

int64_t pl_trace_prompt_tokens(const pl_trace *t) {
    int64_t n = 0;
    for (int i = 0; i < t->num_requests; i++) n += t->requests[i].prompt_len;
    return n;
}

int64_t pl_trace_output_tokens(const pl_trace *t) {
    int64_t n = 0;
    for (int i = 0; i < t->num_requests; i++) n += t->requests[i].max_new_tokens;
    return n;
}

typedef struct strbuf {
    char *p;
    size_t len, cap;
    int oom;
} strbuf;

static void sb_put(strbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_int(strbuf *b, long long v) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    sb_put(b, tmp, (size_t)n);
}

/* json.dumps(trace, sort_keys=True, separators=(",", ":")): keys in sorted order
 * max_new_tokens, prompt_token_ids, request_id. */
int pl_trace_to_json(const pl_trace *t, char **out, size_t *out_len, char *err, size_t err_len) {
    if (!t || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "trace: trace and out must not be NULL");
    strbuf b = {0};
    sb_put(&b, "[", 1);
    for (int i = 0; i < t->num_requests; i++) {
        const pl_trace_request *r = &t->requests[i];
        if (i) sb_put(&b, ",", 1);
        sb_put(&b, "{\"max_new_tokens\":", 18);
        sb_int(&b, r->max_new_tokens);
        sb_put(&b, ",\"prompt_token_ids\":[", 21);
        for (int j = 0; j < r->prompt_len; j++) {
            if (j) sb_put(&b, ",", 1);
            sb_int(&b, r->prompt[j]);
        }
        sb_put(&b, "],\"request_id\":", 15);
        sb_int(&b, r->request_id);
        sb_put(&b, "}", 1);
    }
    sb_put(&b, "]", 1);
    if (b.oom) {
        free(b.p);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "trace: out of memory serializing");
    }
    *out = b.p;
    if (out_len) *out_len = b.len;
    return PL_OK;
}

int pl_trace_sha256(const pl_trace *t, char hex[65], char *err, size_t err_len) {
    char *json = NULL;
    size_t n = 0;
    int rc = pl_trace_to_json(t, &json, &n, err, err_len);
    if (rc != PL_OK) return rc;
    pl_sha256_hex(json, n, hex);
    free(json);
    return PL_OK;
}

int pl_trace_save(const pl_trace *t, const char *path, char *err, size_t err_len) {
    if (!path) return pl_fail(err, err_len, PL_ERR_INVALID, "path: must not be NULL");
    char *json = NULL;
    size_t n = 0;
    int rc = pl_trace_to_json(t, &json, &n, err, err_len);
    if (rc != PL_OK) return rc;
    char hex[65];
    pl_sha256_hex(json, n, hex);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(json);
        return pl_fail(err, err_len, PL_ERR_IO, "trace file '%s': cannot open for writing: %s", path, strerror(errno));
    }
    int ok = fprintf(f, "{\"request_trace_sha256\":\"%s\",\"request_trace\":", hex) > 0;
    ok = ok && fwrite(json, 1, n, f) == n;
    ok = ok && fputs("}\n", f) >= 0;
    ok = (fclose(f) == 0) && ok;
    free(json);
    if (!ok) return pl_fail(err, err_len, PL_ERR_IO, "trace file '%s': write failed", path);
    return PL_OK;
}

static int json_int(const cJSON *o, const char *key, long min, long max, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (d != (double)(long)d || d < (double)min || d > (double)max) return 0;
    *out = (int)d;
    return 1;
}

int pl_trace_load(const char *path, pl_trace *out, char *err, size_t err_len) {
    if (!path || !out) return pl_fail(err, err_len, PL_ERR_INVALID, "trace: path and out must not be NULL");
    out->num_requests = 0;
    out->requests = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return pl_fail(err, err_len, PL_ERR_IO, "trace file '%s': cannot open: %s", path, strerror(errno));
    strbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sb_put(&b, chunk, n);
    int read_err = ferror(f);
    fclose(f);
    if (b.oom || read_err || !b.p) {
        free(b.p);
        return pl_fail(err, err_len, read_err ? PL_ERR_IO : PL_ERR_INVALID, "trace file '%s': %s", path,
                       read_err ? "read failed" : (b.oom ? "out of memory" : "empty file"));
    }
    cJSON *root = cJSON_Parse(b.p);
    free(b.p);
    if (!root) return pl_fail(err, err_len, PL_ERR_INVALID, "trace file '%s': not valid JSON", path);
    const cJSON *list = root;
    if (cJSON_IsObject(root)) list = cJSON_GetObjectItemCaseSensitive(root, "request_trace");
    int rc = PL_OK;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0) {
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "trace file '%s': expected a non-empty list (or \"request_trace\")", path);
        goto done;
    }
    pl_trace t = {cJSON_GetArraySize(list), NULL};
    t.requests = calloc((size_t)t.num_requests, sizeof(pl_trace_request));
    if (!t.requests) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "trace: out of memory");
        goto done;
    }
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, list) {
        pl_trace_request *r = &t.requests[i];
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(item, "prompt_token_ids");
        if (!cJSON_IsObject(item) || !json_int(item, "request_id", 0, 0x7fffffff, &r->request_id) ||
            !json_int(item, "max_new_tokens", 1, 0x7fffffff, &r->max_new_tokens) || !cJSON_IsArray(ids) ||
            cJSON_GetArraySize(ids) == 0) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID,
                         "trace file '%s': request %d: needs request_id, max_new_tokens >= 1 and a non-empty "
                         "prompt_token_ids list", path, i);
            break;
        }
        r->prompt_len = cJSON_GetArraySize(ids);
        r->prompt = malloc(sizeof(int32_t) * (size_t)r->prompt_len);
        if (!r->prompt) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "trace: out of memory");
            break;
        }
        int j = 0;
        const cJSON *id;
        cJSON_ArrayForEach(id, ids) {
            if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 2147483647.0 ||
                id->valuedouble != (double)(int32_t)id->valuedouble) {
                rc = pl_fail(err, err_len, PL_ERR_INVALID, "trace file '%s': request %d: token %d is not a valid id",
                             path, i, j);
                break;
            }
            r->prompt[j++] = (int32_t)id->valuedouble;
        }
        if (rc != PL_OK) break;
        i++;
    }
    if (rc != PL_OK) {
        pl_trace_free(&t);
        goto done;
    }
    *out = t;
done:
    cJSON_Delete(root);
    return rc;
}
